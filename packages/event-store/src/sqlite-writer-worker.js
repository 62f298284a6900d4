// The SQLite writer, on a thread of its own (see sqlite-event-store.ts). Plain JavaScript so
// that it loads in any runtime without a TypeScript loader: node, tsx, vitest workers alike.
// Protocol (every bigint travels as a decimal string):
//   in:  { id, appends: [{ stream, expected: 'no_stream' | 'any' | '<revision>', recordedAt,
//                          rows: [[eventId, type, payloadJson, metadataJson], ...] }] }
//   out: { id, results: [{ ok: { revision, position } } | { conflict: { actual } } | { failed: { code, message } }] }
//      | { id, unavailable: message }  — nothing of the batch was written
//   in:  { id, probe: true }  — one durable write outside the log (the store_probe row)
//   out: { id, probed: true } | { id, unavailable: message }
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const db = new Database(workerData.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('busy_timeout = 5000');
const currentRevision = db.prepare('SELECT revision FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1').pluck();
const insert = db.prepare(
  'INSERT INTO events (event_id, stream, revision, type, payload, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
);

function appendOne({ stream, expected, recordedAt, rows }) {
  const current = currentRevision.get(stream);
  const matches = expected === 'any' || (expected === 'no_stream' ? current === undefined : current !== undefined && String(current) === expected);
  if (!matches) return { conflict: { actual: current === undefined ? 'no_stream' : String(current) } };
  let revision = current ?? -1;
  let position = 0;
  for (const [eventId, type, payload, metadata] of rows) {
    revision += 1;
    position = insert.run(eventId, stream, revision, type, payload, metadata, recordedAt).lastInsertRowid;
  }
  return { ok: { revision: String(revision), position: String(position) } };
}

const probe = db.prepare('INSERT INTO store_probe (id, probed_at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET probed_at = excluded.probed_at');

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
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch (error) {
    parentPort.postMessage({ id, unavailable: `could not begin a write: ${error.message}` });
    return;
  }
  const results = [];
  for (const append of appends) {
    // A savepoint per append: one conflict or failure leaves the rest of the batch alone.
    db.exec('SAVEPOINT append_one');
    try {
      const result = appendOne(append);
      db.exec(result.ok ? 'RELEASE append_one' : 'ROLLBACK TO append_one; RELEASE append_one');
      results.push(result);
    } catch (error) {
      db.exec('ROLLBACK TO append_one; RELEASE append_one');
      results.push({ failed: { code: error.code ?? 'ERR_UNKNOWN', message: error.message } });
    }
  }
  try {
    // synchronous=FULL: when COMMIT returns, the batch is on disk.
    db.exec('COMMIT');
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    parentPort.postMessage({ id, unavailable: `commit failed: ${error.message}` });
    return;
  }
  parentPort.postMessage({ id, results });
});
