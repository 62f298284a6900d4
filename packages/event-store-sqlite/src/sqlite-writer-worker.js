// The SQLite writer, on a thread of its own (see sqlite-event-store.ts). Plain JavaScript so
// that it loads in any runtime without a TypeScript loader: node, tsx, vitest workers alike.
// Protocol (every bigint travels as a decimal string):
//   in:  { id, appends: [{ stream, expected: 'no_stream' | 'any' | '<revision>', recordedAt,
//                          rows: [[eventId, type, payloadJson, metadataJson], ...] }] }
//   out: { id, results: [{ ok: { revision, position } } | { conflict: { actual } } | { failed: { code, message } }], commitMs }
//        commitMs: this thread's time from BEGIN to COMMIT returned (the fsync included), for /metrics
//      | { id, unavailable: message }  — nothing of the batch was written
//   in:  { id, probe: true }  — one durable write outside the log (the store_probe row)
//   out: { id, probed: true } | { id, unavailable: message }
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const db = new Database(workerData.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('busy_timeout = 5000');
// The cache size the store gives (see cacheKiB there): this connection's cache would otherwise fill with every page it writes.
db.pragma(`cache_size = -${workerData.cacheKiB}`);
// Parameters that the planner may read (a LIMIT, a value compared with an indexed column) are
// written (SELECT ?), as in sqlite-event-store.ts: a bare one makes SQLite prepare the statement
// again at every append.
const currentRevision = db.prepare('SELECT revision FROM events WHERE stream = (SELECT ?) ORDER BY revision DESC LIMIT 1').pluck();
const insert = db.prepare(
  'INSERT INTO events (event_id, stream, revision, type, payload, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
);
const eventsFrom = db.prepare('SELECT event_id, revision, position FROM events WHERE stream = (SELECT ?) AND revision >= (SELECT ?) ORDER BY revision ASC LIMIT (SELECT ?)').raw(true);
const revisionOfId = db.prepare('SELECT revision FROM events WHERE event_id = (SELECT ?) AND stream = (SELECT ?)').pluck();

/** The original result when `rows` are exactly the events after `expectedNumber`, else undefined. */
function alreadyAppended(stream, expectedNumber, rows) {
  const existing = eventsFrom.all(stream, expectedNumber + 1, rows.length);
  if (existing.length !== rows.length || existing.some(([eventId], index) => eventId !== rows[index][0])) return undefined;
  const [, revision, position] = existing[existing.length - 1];
  return { ok: { revision: String(revision), position: String(position) } };
}

/**
 * Idempotence as EventStoreDB has it (docs/decisions/0007): an append whose event ids are already
 * in the stream right after the expected revision was made before — it succeeds again with the
 * original revision and position and writes nothing. Ids that match in part, or other events at
 * that place, are a conflict. `any` looks the first id up in the stream, where ESDB uses a cache.
 */
function appendOne({ stream, expected, recordedAt, rows }) {
  const current = currentRevision.get(stream);
  const conflict = { conflict: { actual: current === undefined ? 'no_stream' : String(current) } };
  const currentNumber = current ?? -1;
  if (expected === 'any') {
    const first = revisionOfId.get(rows[0][0], stream);
    if (first !== undefined) return alreadyAppended(stream, first - 1, rows) ?? conflict;
  } else {
    const expectedNumber = expected === 'no_stream' ? -1 : Number(expected);
    if (expectedNumber > currentNumber) return conflict;
    if (expectedNumber < currentNumber) return alreadyAppended(stream, expectedNumber, rows) ?? conflict;
  }
  let revision = currentNumber;
  let position = 0;
  for (const [eventId, type, payload, metadata] of rows) {
    revision += 1;
    try {
      position = insert.run(eventId, stream, revision, type, payload, metadata, recordedAt).lastInsertRowid;
    } catch (error) {
      // The id names another event already in the log: it cannot name this one too (the caller's savepoint undoes the rest).
      if (error.code === 'SQLITE_CONSTRAINT_UNIQUE' && /event_id/.test(error.message)) return conflict;
      throw error;
    }
  }
  return { ok: { revision: String(revision), position: String(position) } };
}

const probe = db.prepare('INSERT INTO store_probe (id, probed_at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET probed_at = excluded.probed_at');
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

parentPort.on('message', ({ id, appends, probe: probing }) => {
  if (probing) {
    try {
      db.transaction(() => probe.run(Date.now()))();
      parentPort.postMessage({ id, probed: true });
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      parentPort.postMessage({ id, unavailable: `probe write failed: ${error.code ?? ''} ${error.message}`.trim() });
    }
    return;
  }
  const started = performance.now();
  try {
    begin.run();
  } catch (error) {
    parentPort.postMessage({ id, unavailable: `could not begin a write: ${error.message}` });
    return;
  }
  const results = [];
  for (const append of appends) {
    // One conflict or failure must leave the rest of the batch alone. An append of one event is
    // one INSERT, which SQLite undoes by itself when it fails; only an append of several needs a
    // savepoint to undo its earlier rows. A savepoint is not free: every page the append touches
    // is first copied into the statement journal (an issuance, a rotation and a revocation are one
    // event each).
    const undoable = append.rows.length > 1;
    if (undoable) savepoint.run();
    try {
      const result = appendOne(append);
      if (undoable && result.ok) release.run();
      else if (undoable) undoAppend();
      results.push(result);
    } catch (error) {
      // Some errors (a full disk, an I/O error) end the whole transaction: nothing of the batch is written.
      if (!db.inTransaction) {
        parentPort.postMessage({ id, unavailable: `append failed: ${error.code ?? ''} ${error.message}`.trim() });
        return;
      }
      if (undoable) undoAppend();
      results.push({ failed: { code: error.code ?? 'ERR_UNKNOWN', message: error.message } });
    }
  }
  try {
    // synchronous=FULL: when COMMIT returns, the batch is on disk.
    commit.run();
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    parentPort.postMessage({ id, unavailable: `commit failed: ${error.message}` });
    return;
  }
  parentPort.postMessage({ id, results, commitMs: performance.now() - started });
});
