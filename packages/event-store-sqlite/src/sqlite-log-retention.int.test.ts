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

/** Every event of the log as a removal of its own stream's position: what the archiver hands over. */
const everyEvent = (file: string) => {
  const db = new Database(file, { readonly: true });
  const rows = db.prepare('SELECT position, stream FROM events').all() as { position: number; stream: string }[];
  db.close();
  return rows.map(({ position, stream }) => ({ stream, positions: [BigInt(position)], truncateBefore: 1n }));
};
const count = (file: string) => {
  const db = new Database(file, { readonly: true });
  const n = db.prepare('SELECT count(*) FROM events').pluck().get() as number;
  db.close();
  return n;
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
    await retention.remove(everyEvent(file));
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
    await retention.remove(everyEvent(file));
    await retention.reclaim();
    fill(file, 20_000);
    expect(retention.bytesOnDisk()).toBeLessThanOrEqual(before * 1.02);
    await retention.close();
  });

  it('removes an event only from the stream named: a position holding another stream\'s event stops the removal and removes nothing', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tessera-retention-'));
    folders.push(folder);
    const file = join(folder, 'events.db');
    await new SqliteEventStore({ file }).close();
    fill(file, 10);
    const [first, second] = everyEvent(file);
    const retention = new SqliteLogRetention(file);
    try {
      // The second event named as the first one's stream: what a planted manifest entry, or an
      // older log restored beside a newer archive, would hand over.
      await expect(retention.remove([first!, { ...second!, stream: first!.stream }])).rejects.toMatchObject({ code: 'ERR_POSITION_HOLDS_ANOTHER_STREAM' });
      expect(count(file)).toBe(10);
      await retention.remove([first!]);
      expect(count(file)).toBe(9);
    } finally {
      await retention.close();
    }
  });

  it('the head position never goes back when the newest events are removed, and a new event takes the next position', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tessera-retention-'));
    folders.push(folder);
    const file = join(folder, 'events.db');
    const store = new SqliteEventStore({ file });
    const retention = new SqliteLogRetention(file);
    try {
      for (let i = 0; i < 3; i += 1) {
        await store.append(`tokenfamily-f${i}`, [{ event: { type: 'AccountRegistered', v: 1, accountId: `a${i}`, name: 'shop', permissions: [], at: 1 } }], { expectedRevision: 'no_stream' });
      }
      expect(await store.headPosition()).toBe(3n);
      await retention.remove(everyEvent(file).slice(1));
      expect(await store.headPosition()).toBe(3n);
      expect(await store.positionBefore(Date.now() + 60_000)).toBe(3n);
      const next = await store.append('tokenfamily-f9', [{ event: { type: 'AccountRegistered', v: 1, accountId: 'a9', name: 'shop', permissions: [], at: 1 } }], { expectedRevision: 'no_stream' });
      expect(next.position).toBe(4n);
      expect(await store.headPosition()).toBe(4n);
    } finally {
      await retention.close();
      await store.close();
    }
  });
});
