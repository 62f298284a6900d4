import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TesseraConfig } from '@tessera/config';
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
  config: Pick<TesseraConfig, 'TESSERA_EVENT_STORE' | 'TESSERA_DATA_DIR'>,
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
  return new SqliteEventStore({ file, ...(options.clock ? { clock: options.clock } : {}), ...(options.readOnly ? { readOnly: true } : {}) });
}

export class NoEventStore extends Error {
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
