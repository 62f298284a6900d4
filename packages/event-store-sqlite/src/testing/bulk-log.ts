import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { schema } from '../sqlite-schema.js';

/**
 * Writes `count` revocation events straight into a SQLite log file, in one transaction: a long
 * log in a second, for tests of what a long catch-up costs. The same rows the store appends.
 */
export function writeBulkLog(file: string, count: number, recordedAt: number): void {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.exec(schema);
    const insert = db.prepare('INSERT INTO events (event_id, stream, revision, type, payload, metadata, recorded_at) VALUES (?, ?, 0, ?, ?, ?, ?)');
    db.transaction(() => {
      for (let i = 0; i < count; i += 1) {
        const familyId = `fam-${i}`;
        const event = { type: 'TokenRevoked', v: 1, familyId, accountId: `acct-${i % 100}`, generation: 0, revokedAt: Math.floor(recordedAt / 1000), accessExpiresAt: Math.floor(recordedAt / 1000) + 3600 };
        insert.run(randomUUID(), `tokenfamily-${familyId}`, event.type, JSON.stringify(event), '{}', recordedAt);
      }
    })();
  } finally {
    db.close();
  }
}
