import { loadConfig } from '@tessera/config';
import type { Role } from '@tessera/host';
import { systemClock } from '@tessera/timing';
// Each command is imported when it runs: an admin command must not load what another one needs
// (serving brings the HTTP server, Kafka's client and a store driver).
import { CliError } from './cli-error.js';
import type { CommandContext } from './command-context.js';
import { errorCode } from '@tessera/contracts';
import { exitCodeFor, isForeseen } from './exit-codes.js';

const usage = `usage: tessera <command>

  start                      issuer + verifier in one process (the embedded default)
  issuer | verifier | relay  one service alone, configured from TESSERA_* variables
  accounts create --name NAME [--permission P]... [--legacy] [--json]
  accounts list [--json]
  accounts rotate-key (--account ID | --api-login-id ID) [--revoke-tokens] [--json]
  accounts set-permissions --account ID (--permission P... | --none) [--revoke-tokens] [--json]
  accounts set-audiences --account ID (--audience URI... | --none) [--json]   RFC 8707 resources its tokens may name
  accounts set-client-keys --account ID (--jwks-file FILE | --jwks-url URL | --none) [--json]   public keys for private_key_jwt (RFC 7523), or the https URL they are fetched from
  accounts set-dpop --account ID (--required | --optional) [--json]   whether its token requests must carry a DPoP proof (RFC 9449)
  accounts add-legacy-key --account ID [--json]
  accounts revoke-legacy-key --account ID --apiid APIID [--revoke-tokens] [--json]
  accounts disable --account ID [--reason TEXT] [--json]   no new tokens; its live tokens and families revoked
  accounts enable --account ID [--json]   new tokens again; those revoked by the disable stay revoked
  admin-tokens create --name NAME --scope audit:read|tokens:revoke|ssf:receivers|accounts:read|accounts:write... [--expires-in SECONDS] [--json]
  admin-tokens list [--json]
  admin-tokens revoke --id ID [--json]
  ssf-receivers create --name NAME [--account ID ...] [--json]   a Shared Signals receiver's token, shown once; --account scopes it to those accounts
  ssf-receivers list [--json]
  ssf-receivers revoke --id ID [--json]
  keys rotate [--kid KID]... [--json]
  keys rotate-hashing [--json]
  audit [--account ID] [--family ID] [--api-login-id ID] [--api-id ID] [--type T]... [--since ISO] [--until ISO]
        [--limit N] [--cursor C] [--format table|ndjson | --json]
  audit access-at --account ID --at ISO [--limit N] [--cursor C] [--json]
  archive status [--json]
  archive verify [--json]
  regions promote-control --region NAME [--json]

accounts over the network (every accounts subcommand, same output and exit codes): TESSERA_ADMIN_URL (the https
URL of an issuer's admin listener), TESSERA_ADMIN_TOKEN_FILE (a file holding an admin token with accounts:read and
accounts:write), TESSERA_ADMIN_CA_FILE (the CA certificate its certificate is checked against), or the flags
--admin-url, --admin-token-file, --admin-ca-file; without them the data folder, as the other commands
first admin token without a shell: TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE (a file holding a token you made, 43+ characters)
and TESSERA_ADMIN_BOOTSTRAP_SCOPES (comma-separated, default all), registered at start when the log has no admin token

exit codes: 0 done, 1 unexpected failure, 2 usage error (or a secret-hashing key the log was not written with),
            3 not found (account, login, key, admin token, receiver, no data, or the log's secret-hashing key),
            4 over its time budget (TESSERA_AUDIT_QUERY_BUDGET_MS: narrow the query),
            5 account writes belong to another region (the control region, which the message names);
            archive verify: 0 whole, 1 naming the first break

Shared Signals (docs/shared-signals.md): TESSERA_PUBLIC_URL (the transmitter's issuer, an https URL;
default https://TESSERA_HOST:<the port bound>), TESSERA_SSF_PAUSE_AFTER (seconds of failing pushes before a
stream is paused, 86400), TESSERA_SSF_PUSH_TIMEOUT (seconds per push, 10), TESSERA_SSF_POLL_WAIT
(seconds a long poll waits, 30), TESSERA_SSF_ACK_DEADLINE (seconds an answered, unacknowledged SET is held back
from the next polls, 10), TESSERA_SSF_EMPTY_POLL_INTERVAL (seconds between two empty polls of a stream that return at once;
one sooner is 429 with Retry-After, 1; 0: no limit), TESSERA_SSF_ALLOW_HTTP_PUSH (true: http push endpoints, development only),
TESSERA_SSF_LEASE_TTL (seconds of the delivery lease one replica holds, 30), TESSERA_SSF_REPLICA_URL (where the
other replicas forward polls to this one), TESSERA_REPLICA_ID (this replica's name in the lease)
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(usage);
    return command ? 0 : 2;
  }
  const role = roleOf(command);
  if (role !== undefined) {
    // Each role's requirements (the relay needs brokers) are checked with the configuration.
    return (await import('./commands/serve.js')).runServe(loadConfig(process.env, { role }), role);
  }
  // Whether the data folder is the default one, relative to where the command runs: see withAdminContext.
  const defaultLog = process.env.TESSERA_DATA_DIR === undefined && process.env.TESSERA_EVENT_STORE === undefined;
  const context: CommandContext = { config: loadConfig(), clock: systemClock, defaultLog };
  switch (command) {
    case 'accounts':
      return (await import('./commands/accounts.js')).runAccounts(context, rest);
    case 'admin-tokens':
      return (await import('./commands/admin-tokens.js')).runAdminTokens(context, rest);
    case 'ssf-receivers':
      return (await import('./commands/ssf-receivers.js')).runSsfReceivers(context, rest);
    case 'keys':
      return (await import('./commands/keys.js')).runKeys(context, rest);
    case 'audit':
      return (await import('./commands/audit.js')).runAudit(context, rest);
    case 'archive':
      return (await import('./commands/archive.js')).runArchive(context, rest);
    case 'regions':
      return (await import('./commands/regions.js')).runRegions(context, rest);
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
    process.stderr.write(`tessera: ${describe(error)}\n`);
    process.exit(exitCodeFor(error));
  },
);

/** The role a command starts, if it starts one. */
function roleOf(command: string): Role | undefined {
  switch (command) {
    case 'start':
      return 'all-in-one';
    case 'issuer':
    case 'verifier':
    case 'relay':
      return command;
    default:
      return undefined;
  }
}

/** The one line an error is reported in: its message when the CLI foresaw it, else also its name (never internals that could carry secrets). */
function describe(error: unknown): string {
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'ERR_START_FAILED') return `cannot start: ${message}`;
  if (isForeseen(error)) return message;
  return `${error instanceof Error ? error.name : 'Error'}: ${message}`;
}
