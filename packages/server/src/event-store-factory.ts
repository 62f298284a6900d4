import { join } from 'node:path';
import type { TesseraConfig } from '@tessera/config';
import { SqliteEventStore, type EventStore } from '@tessera/event-store';

/** SQLite in the data folder unless TESSERA_EVENT_STORE names another store. */
export async function openEventStore(config: TesseraConfig): Promise<EventStore> {
  const target = config.TESSERA_EVENT_STORE;
  if (target?.startsWith('esdb')) {
    const { EsdbEventStore } = (await import('@tessera/event-store')) as unknown as {
      EsdbEventStore?: new (connectionString: string) => EventStore;
    };
    if (!EsdbEventStore) throw new Error('this build has no EventStoreDB adapter');
    return new EsdbEventStore(target);
  }
  const file = target?.startsWith('sqlite:') ? target.slice('sqlite:'.length) : join(config.TESSERA_DATA_DIR, 'events.db');
  return new SqliteEventStore({ file });
}
