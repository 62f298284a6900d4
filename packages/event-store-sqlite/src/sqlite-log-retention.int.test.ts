import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { schema } from './sqlite-schema.js';
import { SqliteEventStore } from './sqlite-event-store.js';
import { SqliteLogRetention } from './sqlite-log-retention.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function fill(file: string, count: number): void {
  const db = new Database(file);
  const insert = db.prepare('INSERT INTO events (event_id, stream, revision, type, payload, metadata, recorded_at) VALUES (?, ?, 0, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < count; i += 1) insert.run(randomUUID(), `tokenfamily-${randomUUID()}`, 'TokenRevoked', JSON.stringify({ padding: 'x'.repeat(400) }), '{}', i);
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

const positions = (file: string) => {
  const db = new Database(file, { readonly: true });
  const all = (db.prepare('SELECT position FROM events').pluck().all() as number[]).map(BigInt);
  db.close();
  return all;
};

describe('SQLite retention', () => {
  it('a log made by this release shrinks once archived events are removed', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tessera-retention-'));
    folders.push(folder);
    const file = join(folder, 'events.db');
    await new SqliteEventStore({ file }).close();
    fill(file, 20_000);
    const retention = new SqliteLogRetention(file);
    const before = retention.bytesOnDisk();
    await retention.remove([{ stream: 'any', positions: positions(file), truncateBefore: 1n }]);
    await retention.reclaim();
    const db = new Database(file);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    expect(retention.autoVacuum).toBe(2);
    expect(retention.bytesOnDisk()).toBeLessThan(before / 10);
    await retention.close();
  });

  it('a log made before (no incremental vacuum) stops growing: the freed pages take the next events', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tessera-retention-'));
    folders.push(folder);
    const file = join(folder, 'events.db');
    const old = new Database(file);
    old.pragma('journal_mode = WAL');
    old.exec(schema);
    old.close();
    fill(file, 20_000);
    const retention = new SqliteLogRetention(file);
    expect(retention.autoVacuum).toBe(0);
    const before = retention.bytesOnDisk();
    await retention.remove([{ stream: 'any', positions: positions(file), truncateBefore: 1n }]);
    await retention.reclaim();
    fill(file, 20_000);
    expect(retention.bytesOnDisk()).toBeLessThanOrEqual(before * 1.02);
    await retention.close();
  });
});
