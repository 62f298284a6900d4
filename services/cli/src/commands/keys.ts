import { streams } from '@tessera/events';
import { DomainError, activeSigningKeys, signingKeysDecider } from '@tessera/domain';
import { handleCommand } from '@tessera/event-store';
import { newSigningKeyPair } from '@tessera/issuer/keys';
import { withAdminContext, type AdminContext } from '../admin-store.js';
import { CliError, NotFound } from '../cli-error.js';
import type { CommandContext } from '../command-context.js';
import { parseCommandOptions } from '../command-options.js';
import { print } from '../output.js';
import { rotateSecretHashingKey } from './rotate-hashing.js';

/** `tessera keys …`: signing keys (`rotate`) and the secret-hashing key (`rotate-hashing`). */
export async function runKeys(command: CommandContext, argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  switch (subcommand) {
    case 'rotate': {
      const { values } = parseCommandOptions(rest, { json: { type: 'boolean' }, kid: { type: 'string', multiple: true } });
      return withAdminContext(command, (context) => rotateSigningKeys(command, context, values.kid ?? [], values.json ?? false));
    }
    case 'rotate-hashing': {
      const { values } = parseCommandOptions(rest, { json: { type: 'boolean' } });
      return withAdminContext(command, (context) => rotateSecretHashingKey(command, context, values.json ?? false));
    }
    default:
      throw new CliError('keys needs one of: rotate, rotate-hashing');
  }
}

/**
 * `keys rotate`: publish a new signing key and retire the active keys whose private half is in
 * this key folder (TESSERA_KEYS_DIR), plus any named with `--kid`. Keys of issuers with their
 * own folders are left alone unless named: retiring them makes each of those issuers publish a
 * replacement. A retired key stays in the JWKS until every token it signed has expired (longest
 * lifetime + clock skew).
 */
async function rotateSigningKeys({ config }: CommandContext, { store, folder, now }: AdminContext, named: readonly string[], json: boolean): Promise<number> {
  const longestLifetime = Math.max(config.TESSERA_ACCESS_TOKEN_TTL, config.TESSERA_LEGACY_TOKEN_TTL);
  const retainUntil = now + longestLifetime + config.TESSERA_CLOCK_SKEW;
  // Made once, so a retry after a conflict publishes the same key.
  const { event: published, privateJwk } = await newSigningKeyPair(now);
  let retired: string[];
  try {
    const { events } = await handleCommand(store, {
      stream: streams.signingKeys(),
      decider: signingKeysDecider,
      command: (state) => ({
        type: 'RotateSigningKeys' as const,
        published,
        named,
        heldHere: activeSigningKeys(state).filter((kid) => folder.holds(kid)),
        now,
        retainUntil,
      }),
      metadata: { actor: 'cli' },
      // Kept only once the rotation is decided: a refused one leaves no stray key in the folder.
      beforeAppend: () => folder.savePrivateKey(published.kid, privateJwk),
      // An issuer publishing its first key meanwhile: decide again with that key in view.
      onConflict: { retries: 3 },
    });
    retired = events.flatMap((event) => (event.type === 'SigningKeyRetired' ? [event.kid] : []));
  } catch (error) {
    if (error instanceof DomainError) throw error.code === 'ERR_SIGNING_KEY_NOT_FOUND' ? new NotFound(error.message) : new CliError(error.message);
    throw error;
  }
  const result = { kid: published.kid, retired, retained_until: new Date(retainUntil * 1000).toISOString() };
  print(
    json,
    result,
    `New signing key ${published.kid} is current.${retired.length ? ` Retired ${retired.join(', ')}; they stay in the JWKS until ${result.retained_until}.` : ''}`,
  );
  return 0;
}
