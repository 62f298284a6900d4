/** One table is the whole log: the global position is the rowid, and (stream, revision) is unique,
 * which is what makes optimistic concurrency hold across processes sharing the file. */
export const schema = `
CREATE TABLE IF NOT EXISTS events (
  position    INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id    TEXT NOT NULL UNIQUE,
  stream      TEXT NOT NULL,
  revision    INTEGER NOT NULL,
  type        TEXT NOT NULL,
  payload     TEXT NOT NULL,
  metadata    TEXT NOT NULL,
  recorded_at INTEGER NOT NULL,
  UNIQUE (stream, revision)
);
CREATE INDEX IF NOT EXISTS events_type_position ON events (type, position);
CREATE INDEX IF NOT EXISTS events_recorded_at ON events (recorded_at);
-- One row, rewritten by probe(): a durable write outside the log that tells whether the disk takes appends again.
CREATE TABLE IF NOT EXISTS store_probe (id INTEGER PRIMARY KEY CHECK (id = 1), probed_at INTEGER NOT NULL);
`;
