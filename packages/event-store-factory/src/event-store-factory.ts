import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { archivedThrough, pinsFromAnchors } from '@tessera/archive';
import { archiveDirOf, type TesseraConfig } from '@tessera/config';
import { CodedError, streams } from '@tessera/events';
import type { SqliteEventStore } from '@tessera/event-store-sqlite';
import type { EventStore, LogRetention } from '@tessera/event-store';
import type { Clock } from '@tessera/timing';

/**
 * The one place a store is opened from configuration: every service and every CLI command
 * goes through here, so a test of this function covers the wiring users run. SQLite in the
 * data folder unless TESSERA_EVENT_STORE names another store.
 *
 * Each adapter is imported only when chosen: a process on EventStoreDB never loads the SQLite
 * driver's native module, and one on SQLite never loads gRPC.
 */
export async function openEventStore(
  config: Pick<TesseraConfig, 'TESSERA_EVENT_STORE' | 'TESSERA_DATA_DIR'> & Partial<Pick<TesseraConfig, 'TESSERA_ARCHIVE_DIR'>>,
  options: {
    /**
     * Open an embedded store only if its file is there; else throw NoEventStore, having created
     * nothing. For commands that only read: pointed at the wrong folder, they must not leave a new
     * empty store behind. (An EventStoreDB server is opened as usual.)
     */
    readonly mustExist?: boolean;
    /** For the times the store records; default the system's. */
    readonly clock?: Clock;
    /** A reader only: an embedded store starts no writer thread and refuses appends. */
    readonly readOnly?: boolean;
  } = {},
): Promise<EventStore> {
  const target = config.TESSERA_EVENT_STORE;
  if (target?.startsWith('esdb')) {
    const { EsdbEventStore } = await import('@tessera/event-store-esdb');
    return new EsdbEventStore({ connectionString: target });
  }
  const { SqliteEventStore } = await import('@tessera/event-store-sqlite');
  const file = target?.startsWith('sqlite:') ? target.slice('sqlite:'.length) : join(config.TESSERA_DATA_DIR, 'events.db');
  if (options.mustExist && !existsSync(file)) throw new NoEventStore(file);
  const store = new SqliteEventStore({ file, ...(options.clock ? { clock: options.clock } : {}), ...(options.readOnly ? { readOnly: true } : {}) });
  if (!options.readOnly) await keepPositionsAhead(store, config.TESSERA_DATA_DIR, archiveDirOf(config));
  return store;
}

/**
 * Every writer of an embedded log opens it here, so this is where a log restored from an older copy
 * is moved past every position the rest of its data folder recorded, before anything appends: the
 * relay's and the Shared Signals transmitter's checkpoints (a new event at or below a checkpoint
 * would never be published or delivered) and the archive (a new event must not take a position an
 * archived one has). Costs a few small reads on each open; the archive's newest entry is checked
 * against the log's pins only when it runs ahead.
 */
async function keepPositionsAhead(store: SqliteEventStore, dataDir: string, archiveDir: string): Promise<void> {
  const head = (await store.headPosition()) ?? 0n;
  let through = positionsCheckpointedIn(dataDir);
  const archived = archivedThrough(archiveDir, async () => pinsFromAnchors((await store.readStream(streams.archiveTrust())).map(({ event }) => event), 'the event log'));
  if (archived.unchecked !== undefined && archived.unchecked > head && archived.unchecked > through) through = (await archived.checked()) ?? through;
  if (through > head) await store.reservePositionsThrough(through);
}

/**
 * The highest position the data folder's checkpoints name (files the relay writes whole, and the
 * transmitter's of versions before its checkpoints moved into the log); 0 when none.
 */
function positionsCheckpointedIn(dataDir: string): bigint {
  let highest = 0n;
  const consider = (value: unknown) => {
    if (typeof value === 'string' && /^\d{1,18}$/.test(value) && BigInt(value) > highest) highest = BigInt(value);
  };
  for (const name of ['relay-checkpoint.json', 'relay-accounts-checkpoint.json', 'relay-families-checkpoint.json', 'ssf-checkpoints.json']) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(join(dataDir, name), 'utf8'));
    } catch {
      // Missing or unreadable: its owner says so when it loads it.
      continue;
    }
    if (typeof parsed !== 'object' || parsed === null) continue;
    const { position, streams: perStream } = parsed as { position?: unknown; streams?: unknown };
    consider(position);
    if (typeof perStream === 'object' && perStream !== null) for (const value of Object.values(perStream)) consider(value);
  }
  return highest;
}
export class NoEventStore extends CodedError {
  readonly code = 'ERR_NO_EVENT_STORE';
  constructor(readonly file: string) {
    super(`no event store at ${file}`);
    this.name = 'NoEventStore';
  }
}

/**
 * The retention side of the store TESSERA_EVENT_STORE names, for the archiver: it removes archived
 * events (docs/decisions/0017). Only the adapter configured is loaded, as for openEventStore.
 */
export async function openLogRetention(config: Pick<TesseraConfig, 'TESSERA_EVENT_STORE' | 'TESSERA_DATA_DIR'>): Promise<LogRetention> {
  const target = config.TESSERA_EVENT_STORE;
  if (target?.startsWith('esdb')) {
    const { EsdbLogRetention } = await import('@tessera/event-store-esdb');
    return new EsdbLogRetention({ connectionString: target });
  }
  const { SqliteLogRetention } = await import('@tessera/event-store-sqlite');
  const file = target?.startsWith('sqlite:') ? target.slice('sqlite:'.length) : join(config.TESSERA_DATA_DIR, 'events.db');
  return new SqliteLogRetention(file);
}
