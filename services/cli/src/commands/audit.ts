import { mkdirSync } from 'node:fs';
import { errorCode } from '@tessera/contracts';
import { ArchiveReader, TrustedArchive } from '@tessera/archive';
import { readArchivePins } from '@tessera/archiving';
import { archiveDirOf } from '@tessera/config';
import {
  AuditIndex,
  AuditQueries,
  InvalidQuery,
  accessAtBody,
  auditIndexFile,
  catchUpIndex,
  encodeCursor,
  parseAccessAtQuery,
  parseEventQuery,
  type AuditRow,
} from '@tessera/audit';
import { withExistingLog } from '../admin-store.js';
import { AuditIndexBusy, CliError, NotFound } from '../cli-error.js';
import type { CommandContext } from '../command-context.js';
import { parseCommandOptions } from '../command-options.js';
import { jsonText, print, shown } from '../output.js';

/**
 * `tessera audit`: the audit trail, with the filters and paging of `GET /admin/v1/events`, read
 * through the same audit index and query (`<data dir>/audit-index.db`, brought up to the log's
 * head first), so the machine and the admin API give the same rows. `--format table` (default)
 * for people, `ndjson` for scripts; `--json` prints the rows as one JSON array.
 */
export async function runAudit(command: CommandContext, argv: string[]): Promise<number> {
  if (argv[0] === 'access-at') return runAccessAt(command, argv.slice(1));
  const { values } = parseCommandOptions(argv, {
    account: { type: 'string' },
    family: { type: 'string' },
    'api-login-id': { type: 'string' },
    'api-id': { type: 'string' },
    type: { type: 'string', multiple: true },
    since: { type: 'string' },
    until: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    format: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.json && values.format !== undefined) throw new CliError('--json and --format cannot be given together (--json prints a JSON array)');
  const format = values.json ? 'json' : (values.format ?? 'table');
  if (format !== 'table' && format !== 'ndjson' && format !== 'json') throw new CliError('--format must be table or ndjson');
  const query = asUsageError(() =>
    parseEventQuery({
      account: values.account,
      family: values.family,
      api_login_id: values['api-login-id'],
      api_id: values['api-id'],
      type: values.type,
      since: values.since,
      until: values.until,
      limit: values.limit,
      cursor: values.cursor,
    }),
  );

  return withAuditIndex(command, async (queries) => {
    const page = await queries.events(query, command.config.TESSERA_AUDIT_QUERY_BUDGET_MS);
    const next = page.more === undefined ? undefined : encodeCursor(page.more);
    if (format === 'table') {
      // Values from the log (ids, a client's request id) are escaped, as everywhere in human text.
      const lines = page.rows.length === 0 ? ['no matching events'] : page.rows.map(describe);
      if (next !== undefined) lines.push(`more events match: add --cursor ${next}`);
      print(false, undefined, lines.join('\n'));
      return 0;
    }
    if (format === 'ndjson') process.stdout.write(page.rows.map((row) => `${jsonText(row)}\n`).join(''));
    else print(true, page.rows, '');
    // Scripts read the rows on stdout; where the next page starts goes apart, as the API's header does.
    if (next !== undefined) process.stderr.write(`next_cursor ${next}\n`);
    return 0;
  });
}

/** `tessera audit access-at --account ID --at ISO`: the API's access-at answer, from the same index. */
async function runAccessAt(command: CommandContext, argv: string[]): Promise<number> {
  const { values } = parseCommandOptions(argv, {
    account: { type: 'string' },
    at: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.account === undefined) throw new CliError('--account is required');
  if (values.at === undefined) throw new CliError('--at is required: the instant to ask about, ISO 8601, e.g. 2026-11-22T14:03:00Z');
  const accountId = values.account;
  const { atMs, limit, after } = asUsageError(() => parseAccessAtQuery(accountId, { at: values.at, limit: values.limit, cursor: values.cursor }, command.clock.now()));
  return withAuditIndex(command, async (queries) => {
    const answer = await queries.accessAt(accountId, Math.floor(atMs / 1000), { limit, after }, command.config.TESSERA_AUDIT_QUERY_BUDGET_MS);
    if (answer === undefined) throw new NotFound(`no account ${shown(accountId)} in the log`);
    const body = accessAtBody(atMs, answer);
    const lines = [
      `at ${body.at} (log position ${body.log_position ?? 'none'}): ${count(body.families.length, 'family', 'families')}, ${count(body.legacy_tokens.length, 'v1 token', 'v1 tokens')} with a usable access token`,
      ...body.families.map((f) => `  family ${shown(f.family_id)}  generation ${f.generation}  issued ${f.issued_at}  expires ${f.expires_at}  credential ${shown(f.credential_id)}`),
      ...body.legacy_tokens.map((t) => `  v1 token ${shown(t.jti)}  issued ${t.issued_at}  expires ${t.expires_at}  credential ${shown(t.credential_id)}`),
      ...(body.next_cursor === null ? [] : [`more tokens may have been usable then: add --cursor ${body.next_cursor}`]),
    ];
    print(values.json ?? false, body, lines.join('\n'));
    return 0;
  });
}

/**
 * Opens the data folder's audit index and brings it up to the log's head; a running server
 * keeps it current, so this usually reads only the last few events. Reading only: the log must
 * exist (withExistingLog), and the index is made only next to it. The archive's segments are
 * read beside it (TESSERA_ARCHIVE_DIR), as the server reads them.
 */
function withAuditIndex(command: CommandContext, run: (queries: AuditQueries) => Promise<number>): Promise<number> {
  const { config } = command;
  return withExistingLog(command, async (store) => {
    // With EventStoreDB the log is elsewhere and the data folder may not exist yet on this machine.
    mkdirSync(config.TESSERA_DATA_DIR, { recursive: true, mode: 0o700 });
    const index = AuditIndex.open(auditIndexFile(config.TESSERA_DATA_DIR));
    try {
      await catchUpIndex(index, store).catch((error: unknown) => {
        const code = errorCode(error);
        if (code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED') throw error;
        throw new AuditIndexBusy('the audit index is being filled by another process (a server rebuilding it after a start); try again in a few seconds');
      });
      // The archive as the server reads it: verified against the anchors in the log, each segment hashed before it is read.
      return await run(new AuditQueries(index, new ArchiveReader(new TrustedArchive(archiveDirOf(config), () => readArchivePins(store)))));
    } finally {
      index.close();
    }
  });
}

/** A filter the query refuses, named as the flag the operator typed. */
function asUsageError<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof InvalidQuery) throw new CliError(`--${error.parameter === 'account_id' ? 'account' : error.parameter.replaceAll('_', '-')} ${error.reason}`);
    throw error;
  }
}

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function describe(row: AuditRow): string {
  const parts = [row.time, `#${row.position}`, row.type, `account ${shown(row.account_id ?? '-')}`];
  if (row.family_id !== null) parts.push(`family ${shown(row.family_id)} gen ${row.generation ?? '-'}`);
  if (row.reason !== null) parts.push(`reason ${shown(row.reason)}`);
  parts.push(`request ${shown(row.request_id ?? '-')}`, `from ${shown(row.source_address ?? '-')}`);
  if (row.actor !== null) parts.push(`by ${shown(row.actor)}`);
  return parts.join('  ');
}
