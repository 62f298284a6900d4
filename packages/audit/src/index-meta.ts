import type Database from 'better-sqlite3';

/** The keys of the index's meta table (audit-index-schema.ts says what each holds). */
export type MetaKey = 'version' | 'log_position' | 'first_event_id' | 'first_position' | 'last_event_id' | 'last_time' | 'analyzed_at';

/** What the index remembers beside its rows: where in the log it is, and what it saw there. */
export class IndexMeta {
  private readonly read: Database.Statement<[string], { value: string }>;
  private readonly write: Database.Statement<[string, string]>;

  constructor(db: Database.Database) {
    this.read = db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?');
    this.write = db.prepare<[string, string]>('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  }

  get(key: MetaKey): string | undefined {
    return this.read.get(key)?.value;
  }

  set(key: MetaKey, value: string): void {
    this.write.run(key, value);
  }

  /** The position of the last event the index reflects; undefined while it reflects none. */
  position(): bigint | undefined {
    const value = this.get('log_position');
    return value === undefined ? undefined : BigInt(value);
  }
}
