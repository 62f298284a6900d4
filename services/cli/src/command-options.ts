import { parseArgs, type ParseArgsConfig } from 'node:util';
import { errorCode } from '@tessera/contracts';
import { CliError } from './cli-error.js';

type Options = NonNullable<ParseArgsConfig['options']>;
/** Named, so the compiled declarations can say what a command gets back. */
export type ParsedCommandOptions<T extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: T; strict: true; allowPositionals: false }>>;

/**
 * parseArgs, with two fixes for an admin CLI:
 *
 * - Identifiers are base64url, so one in 32 starts with "-". Node 20's parseArgs then reads
 *   `--family -1gm…` as a missing value. A string option always takes the next argument as its
 *   value here, whatever it starts with, as `--family=-1gm…` would.
 * - parseArgs throws TypeError for a mistyped flag; that is the caller's mistake, so it becomes
 *   a CliError (one line, exit code 2), not an "unexpected error".
 * - parseArgs keeps the last of a repeated single-valued flag: `--account A --account B` would act
 *   on B without a word. A flag that is not `multiple` may appear once.
 */
export function parseCommandOptions<T extends Options>(args: string[], options: T): ParsedCommandOptions<T> {
  const joined: string[] = [];
  const seen = new Set<string>();
  for (let index = 0; index < args.length; index += 1) {
    const argument = args[index]!;
    const flag = argument.startsWith('--') ? argument.slice(2).split('=')[0]! : undefined;
    if (flag !== undefined && options[flag] !== undefined && !options[flag].multiple) {
      if (seen.has(flag)) throw new CliError(`--${flag} was given more than once${options[flag].type === 'string' ? '; it takes one value' : ''}`);
      seen.add(flag);
    }
    const name = argument.startsWith('--') && !argument.includes('=') ? argument.slice(2) : undefined;
    const next = args[index + 1];
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined) {
      joined.push(`${argument}=${next}`);
      index += 1;
    } else {
      joined.push(argument);
    }
  }
  try {
    return parseArgs({ args: joined, options, strict: true, allowPositionals: false });
  } catch (error) {
    if (error instanceof Error && errorCode(error)?.startsWith('ERR_PARSE_ARGS_')) throw new CliError(error.message);
    throw error;
  }
}
