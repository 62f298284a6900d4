import { randomBytes, randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import type { EventMetadata, TesseraEvent } from '@tessera/events';
import { newEventId } from '@tessera/event-store';
import { schema } from '../sqlite-schema.js';

export interface BulkEntry {
  readonly stream: string;
  readonly event: TesseraEvent;
  readonly recordedAt: number;
  readonly metadata?: EventMetadata;
}

/**
 * A new family's issuance recorded at `at` (epoch milliseconds), as the issuer writes it: its access
 * token lives an hour and its refresh token a week, so the family closes a week after `at`.
 */
export function issuedFamily(accountId: string, at: number, metadata: EventMetadata = {}): BulkEntry {
  const familyId = randomBytes(16).toString('base64url');
  const seconds = Math.floor(at / 1000);
  return {
    stream: `tokenfamily-${familyId}`,
    event: {
      type: 'TokenIssued',
      v: 1,
      familyId,
      accountId,
      credentialId: randomUUID(),
      apiLoginId: 'tsl_shop',
      generation: 0,
      refreshTokenHash: 'A'.repeat(43),
      jti: randomBytes(16).toString('base64url'),
      scope: [],
      issuedAt: seconds,
      accessExpiresAt: seconds + 3600,
      refreshExpiresAt: seconds + 7 * 86_400,
    },
    recordedAt: at,
    metadata: { requestId: randomUUID(), accountId, ...metadata },
  };
}

/**
 * Writes events straight into a SQLite log file, in one transaction and the same rows the store
 * appends: a long log in a second or two, for tests of what a long history costs. Revisions count
 * per stream from what the file already holds.
 */
export function writeBulkLog(file: string, entries: Iterable<BulkEntry>): void {
  const db = new Database(file);
  try {
    db.pragma('auto_vacuum = INCREMENTAL');
    db.pragma('journal_mode = WAL');
    db.exec(schema);
    const insert = db.prepare('INSERT INTO events (event_id, stream, revision, type, payload, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const lastRevision = db.prepare<[string], number | null>('SELECT MAX(revision) FROM events WHERE stream = ?').pluck();
    const revisions = new Map<string, number>();
    db.transaction(() => {
      for (const { stream, event, recordedAt, metadata } of entries) {
        const revision = (revisions.get(stream) ?? lastRevision.get(stream) ?? -1) + 1;
        revisions.set(stream, revision);
        insert.run(newEventId(), stream, revision, event.type, JSON.stringify(event), JSON.stringify(metadata ?? {}), recordedAt);
      }
    })();
  } finally {
    db.close();
  }
}

/** `count` revocations of families of their own: a long log for catch-up tests. */
export function* revocations(count: number, recordedAt: number): Generator<BulkEntry> {
  const seconds = Math.floor(recordedAt / 1000);
  for (let i = 0; i < count; i += 1) {
    const familyId = `fam-${i}`;
    yield {
      stream: `tokenfamily-${familyId}`,
      event: { type: 'TokenRevoked', v: 1, familyId, accountId: `acct-${i % 100}`, generation: 0, revokedAt: seconds, accessExpiresAt: seconds + 3600 },
      recordedAt,
    };
  }
}
