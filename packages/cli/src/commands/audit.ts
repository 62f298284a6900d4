import { TesseraEvent, type RecordedEvent, type TesseraEventType } from '@tessera/contracts';
import type { TesseraConfig } from '@tessera/config';
import { readWholeLog, withExistingLog } from '../admin-store.js';
import { CliError } from '../cli-error.js';
import { parseCommandOptions } from '../command-options.js';
import { print, shown } from '../output.js';

const eventTypes = TesseraEvent.options.map((option) => option.shape.type.value) as TesseraEventType[];

/**
 * `tessera audit`: the event log, filtered, oldest first. Keyed hashes are left out of the
 * output: they are not secrets, but nobody reading an audit trail needs them.
 */
export async function runAudit(config: TesseraConfig, argv: string[]): Promise<number> {
  const { values } = parseCommandOptions(argv, {
    account: { type: 'string' },
    family: { type: 'string' },
    type: { type: 'string', multiple: true },
    since: { type: 'string' },
    until: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
  });
  const types = values.type ?? [];
  for (const type of types) if (!eventTypes.includes(type as TesseraEventType)) throw new CliError(`unknown event type "${type}"; one of: ${eventTypes.join(', ')}`);
  const since = time(values.since, '--since');
  const until = time(values.until, '--until');
  const limit = values.limit === undefined ? 1000 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new CliError('--limit must be a positive whole number');

  // Reading only: no store or hashing key is made where there is none.
  return withExistingLog(config, async (store) => {
    const matching = (await readWholeLog(store, types.length > 0 ? (types as TesseraEventType[]) : eventTypes)).filter(
      (recorded) =>
        (values.account === undefined || accountOf(recorded) === values.account) &&
        (values.family === undefined || (recorded.event as { familyId?: string }).familyId === values.family) &&
        (since === undefined || recorded.recordedAt >= since) &&
        (until === undefined || recorded.recordedAt < until),
    );
    const rows = matching.slice(-limit).map(toAuditRow);
    // The stream names ids and the request id can come from a client: escaped, as every value from the log.
    const human =
      rows.length === 0
        ? 'no matching events'
        : rows.map((row) => `${row.recorded_at}  #${row.position}  ${row.type}  ${shown(row.stream)}  request ${shown(row.request_id ?? '-')}`).join('\n');
    print(values.json ?? false, rows, human);
    return 0;
  });
}

function time(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Date.parse(value);
  if (Number.isNaN(parsed)) throw new CliError(`${flag} must be an ISO 8601 time, e.g. 2026-11-22T18:00:00Z`);
  return parsed;
}

function accountOf(recorded: RecordedEvent): string | undefined {
  return (recorded.event as { accountId?: string }).accountId ?? recorded.metadata.accountId;
}

function toAuditRow(recorded: RecordedEvent) {
  const event = Object.fromEntries(Object.entries(recorded.event).filter(([field]) => !field.endsWith('Hash')));
  return {
    position: recorded.position.toString(),
    recorded_at: new Date(recorded.recordedAt).toISOString(),
    stream: recorded.stream,
    type: recorded.event.type,
    account_id: accountOf(recorded),
    request_id: recorded.metadata.requestId,
    source_address: recorded.metadata.sourceAddress,
    actor: recorded.metadata.actor,
    event,
  };
}
