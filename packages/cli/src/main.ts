import { ConfigError, loadConfig } from '@tessera/config';
// Each command is imported when it runs: an admin command must not load what another one needs
// (the audit index's composition brings the HTTP host with it; serving brings everything).
import { CliError, exitCodes } from './cli-error.js';

const usage = `usage: tessera <command>

  start                      issuer + verifier in one process (the embedded default)
  issuer | verifier | relay  one service alone, configured from TESSERA_* variables
  accounts create --name NAME [--permission P]... [--legacy] [--json]
  accounts list [--json]
  accounts rotate-key (--account ID | --api-login-id ID) [--revoke-tokens] [--json]
  accounts set-permissions --account ID (--permission P... | --none) [--revoke-tokens] [--json]
  accounts add-legacy-key --account ID [--json]
  accounts revoke-legacy-key --account ID --apiid APIID [--revoke-tokens] [--json]
  admin-tokens create --name NAME --scope audit:read|tokens:revoke... [--json]
  admin-tokens list [--json]
  admin-tokens revoke --id ID [--json]
  keys rotate [--kid KID]... [--json]
  audit [--account ID] [--family ID] [--api-login-id ID] [--api-id ID] [--type T]... [--since ISO] [--until ISO]
        [--limit N] [--cursor C] [--format table|ndjson | --json]
  audit access-at --account ID --at ISO [--json]

exit codes: 0 done, 1 unexpected failure, 2 usage error, 3 not found (account, login, key, admin token, or no data)
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(usage);
    return command ? 0 : 2;
  }
  const config = loadConfig();
  switch (command) {
    case 'start':
      return (await import('./commands/serve.js')).runServe(config, 'all-in-one');
    case 'issuer':
    case 'verifier':
      return (await import('./commands/serve.js')).runServe(config, command);
    case 'relay': {
      const { runRelay } = await import('./commands/relay.js');
      return runRelay(config);
    }
    case 'accounts':
      return (await import('./commands/accounts.js')).runAccounts(config, rest);
    case 'admin-tokens':
      return (await import('./commands/admin-tokens.js')).runAdminTokens(config, rest);
    case 'keys':
      return (await import('./commands/keys.js')).runKeys(config, rest);
    case 'audit':
      return (await import('./commands/audit.js')).runAudit(config, rest);
    default:
      throw new CliError(`unknown command "${command}"\n\n${usage}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== -1) process.exitCode = code;
  },
  (error: unknown) => {
    // One line naming the cause, then exit at once: a process that failed to start must not linger
    // with half its parts open (a supervisor would see it alive and serving nothing).
    if (error instanceof ConfigError || error instanceof CliError) {
      process.stderr.write(`tessera: ${error.message}\n`);
      process.exit(error instanceof CliError ? error.exitCode : exitCodes.usage);
    }
    if (error instanceof Error && error.name === 'StartFailure') {
      process.stderr.write(`tessera: cannot start: ${error.message}\n`);
      process.exit(1);
    }
    // Unexpected: name it without dumping internals that could carry secrets.
    process.stderr.write(`tessera: ${(error as Error).name ?? 'Error'}: ${(error as Error).message ?? String(error)}\n`);
    process.exit(1);
  },
);
