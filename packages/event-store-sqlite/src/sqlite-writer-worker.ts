// The SQLite writer, on a thread of its own (see sqlite-event-store.ts). Its messages are typed
// once, in sqlite-writer-protocol.ts, imported as types by both sides: compiled, this is the same
// plain JavaScript module it always was, loaded with no TypeScript loader and no bootstrap.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { errorCode } from '@tessera/contracts/errors';
import type { ProbeReply, WriterAppend, WriterData, WriterReply, WriterRequest, WriterResult, WriterRow } from './sqlite-writer-protocol.js';

// Cast: what the store passes as workerData (startWriter), typed by the protocol it shares with this thread.
const { file, cacheKiB } = workerData as WriterData;
// Cast: this module runs only as the writer thread (startWriter), where parentPort is set.
const port = parentPort!;

const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('busy_timeout = 5000');
// The cache size the store gives (see cacheKiB there): this connection's cache would otherwise fill with every page it writes.
db.pragma(`cache_size = -${cacheKiB}`);
// Parameters that the planner may read (a LIMIT, a value compared with an indexed column) are
// written (SELECT ?), as in sqlite-event-store.ts: a bare one makes SQLite prepare the statement
// again at every append.
const currentRevision = db.prepare<[string], number>('SELECT revision FROM events WHERE stream = (SELECT ?) ORDER BY revision DESC LIMIT 1').pluck();
const insert = db.prepare<[string, string, number, string, string, string, number]>(
  'INSERT INTO events (event_id, stream, revision, type, payload, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
);
const eventsFrom = db
  .prepare<[string, number, number], [eventId: string, revision: number, position: number]>('SELECT event_id, revision, position FROM events WHERE stream = (SELECT ?) AND revision >= (SELECT ?) ORDER BY revision ASC LIMIT (SELECT ?)')
  .raw(true);
const revisionOfId = db.prepare<[string, string], number>('SELECT revision FROM events WHERE event_id = (SELECT ?) AND stream = (SELECT ?)').pluck();

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The original result when `rows` are exactly the events after `expectedNumber`, else undefined. */
function alreadyAppended(stream: string, expectedNumber: number, rows: readonly WriterRow[]): WriterResult | undefined {
  const existing = eventsFrom.all(stream, expectedNumber + 1, rows.length);
  if (existing.length !== rows.length || existing.some(([eventId], index) => eventId !== rows[index]![0])) return undefined;
  const [, revision, position] = existing[existing.length - 1]!;
  return { ok: { revision: String(revision), position: String(position) } };
}

/**
 * Idempotence as EventStoreDB has it (docs/decisions/0007): an append whose event ids are already
 * in the stream right after the expected revision was made before — it succeeds again with the
 * original revision and position and writes nothing. Ids that match in part, or other events at
 * that place, are a conflict. `any` looks the first id up in the stream, where ESDB uses a cache.
 */
function appendOne({ stream, expected, recordedAt, rows }: WriterAppend): WriterResult {
  const current = currentRevision.get(stream);
  const conflict: WriterResult = { conflict: { actual: current === undefined ? 'no_stream' : String(current) } };
  const currentNumber = current ?? -1;
  if (expected === 'any') {
    const first = revisionOfId.get(rows[0]![0], stream);
    if (first !== undefined) return alreadyAppended(stream, first - 1, rows) ?? conflict;
  } else {
    const expectedNumber = expected === 'no_stream' ? -1 : Number(expected);
    if (expectedNumber > currentNumber) return conflict;
    if (expectedNumber < currentNumber) return alreadyAppended(stream, expectedNumber, rows) ?? conflict;
  }
  let revision = currentNumber;
  let position: number | bigint = 0;
  for (const [eventId, type, payload, metadata] of rows) {
    revision += 1;
    try {
      position = insert.run(eventId, stream, revision, type, payload, metadata, recordedAt).lastInsertRowid;
    } catch (error) {
      // The id names another event already in the log: it cannot name this one too (the caller's savepoint undoes the rest).
      if (errorCode(error) === 'SQLITE_CONSTRAINT_UNIQUE' && /event_id/.test(messageOf(error))) return conflict;
      throw error;
    }
  }
  return { ok: { revision: String(revision), position: String(position) } };
}

const probe = db.prepare<[number]>('INSERT INTO store_probe (id, probed_at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET probed_at = excluded.probed_at');
// Prepared once: db.exec parses its SQL again at every call, several times per commit.
const begin = db.prepare('BEGIN IMMEDIATE');
const commit = db.prepare('COMMIT');
const savepoint = db.prepare('SAVEPOINT append_one');
const release = db.prepare('RELEASE append_one');
const rollbackToSavepoint = db.prepare('ROLLBACK TO append_one');
/** Undoes what an append wrote since its savepoint, and ends the savepoint. */
const undoAppend = () => {
  rollbackToSavepoint.run();
  release.run();
};

const reply = (message: WriterReply | ProbeReply) => port.postMessage(message);

port.on('message', (request: WriterRequest) => {
  const { id } = request;
  if (request.probe) {
    try {
      db.transaction(() => probe.run(Date.now()))();
      reply({ id, probed: true });
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      reply({ id, unavailable: `probe write failed: ${errorCode(error) ?? ''} ${messageOf(error)}`.trim() });
    }
    return;
  }
  const started = performance.now();
  try {
    begin.run();
  } catch (error) {
    reply({ id, unavailable: `could not begin a write: ${messageOf(error)}` });
    return;
  }
  const results: WriterResult[] = [];
  for (const append of request.appends) {
    // One conflict or failure must leave the rest of the batch alone. An append of one event is
    // one INSERT, which SQLite undoes by itself when it fails; only an append of several needs a
    // savepoint to undo its earlier rows. A savepoint is not free: every page the append touches
    // is first copied into the statement journal (an issuance, a rotation and a revocation are one
    // event each).
    const undoable = append.rows.length > 1;
    if (undoable) savepoint.run();
    try {
      const result = appendOne(append);
      if (undoable && 'ok' in result) release.run();
      else if (undoable) undoAppend();
      results.push(result);
    } catch (error) {
      // Some errors (a full disk, an I/O error) end the whole transaction: nothing of the batch is written.
      if (!db.inTransaction) {
        reply({ id, unavailable: `append failed: ${errorCode(error) ?? ''} ${messageOf(error)}`.trim() });
        return;
      }
      if (undoable) undoAppend();
      results.push({ failed: { code: errorCode(error) ?? 'ERR_UNKNOWN', message: messageOf(error) } });
    }
  }
  try {
    // synchronous=FULL: when COMMIT returns, the batch is on disk.
    commit.run();
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    reply({ id, unavailable: `commit failed: ${messageOf(error)}` });
    return;
  }
  reply({ id, results, commitMs: performance.now() - started });
});
