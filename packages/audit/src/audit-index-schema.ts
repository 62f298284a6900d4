/**
 * The audit index's tables. Bump `indexVersion` whenever they, or what is derived from an event
 * (audit-row.ts, `accessEventOf`), change: an index of another version is dropped and rebuilt
 * from the log, as it is derived data.
 */
export const indexVersion = '3';

/**
 * The largest log position the index can hold: `position` is an INTEGER PRIMARY KEY, a signed
 * 64-bit integer in SQLite. EventStoreDB's commit positions are unsigned 64-bit, so a position
 * past this is one the index could never have reflected, and no cursor names one.
 */
export const maxIndexedPosition = 9_223_372_036_854_775_807n;

export const indexSchema = `
-- log_position: the last event the index reflects; first_event_id, last_event_id: the ids of the
-- log's first event and of that last one, to tell another log (first_position: where that first
-- event was, as archiving removes events from the head of the log); last_time: the time of the last row
-- (rows' times never go backwards); version: indexVersion.
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;

-- One row per event of the log, keyed by its log position. time is epoch ms, made non-decreasing
-- along the log so that since/until select one stretch of positions. access: for access-at, the
-- event's access event (JSON; access-at.ts), when it issues or cuts tokens.
CREATE TABLE IF NOT EXISTS events (
  position       INTEGER PRIMARY KEY,
  type           TEXT NOT NULL,
  time           INTEGER NOT NULL,
  account_id     TEXT,
  family_id      TEXT,
  generation     INTEGER,
  reason         TEXT,
  request_id     TEXT,
  source_address TEXT,
  actor          TEXT,
  api_login_id   TEXT,
  api_id         TEXT,
  access         TEXT
);
CREATE INDEX IF NOT EXISTS events_account ON events (account_id, position) WHERE account_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_family ON events (family_id, position) WHERE family_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_api_login_id ON events (api_login_id, position) WHERE api_login_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_api_id ON events (api_id, position) WHERE api_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_type ON events (type, position);
CREATE INDEX IF NOT EXISTS events_time ON events (time);

-- For access-at: each grant of tokens (a family, or one event of its own: a v1 token, a cut), with
-- the seconds during which it can matter (epoch seconds), so that access-at replays only the grants
-- that can bear on the instant asked about. A family's events are found by family_id; another
-- grant's one event by its position.
CREATE TABLE IF NOT EXISTS grants (
  grant_id        TEXT PRIMARY KEY,
  account_id      TEXT NOT NULL,
  first_at        INTEGER NOT NULL,
  last_expires_at INTEGER NOT NULL,
  api_login_id    TEXT,
  position        INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS grants_account ON grants (account_id, last_expires_at);
`;

export const indexTables = ['meta', 'events', 'grants'] as const;

/** Every index but the tables' own keys: what a bulk load drops and makes again (indexSchema makes them). */
export const secondaryIndexes = [...indexSchema.matchAll(/CREATE INDEX IF NOT EXISTS (\w+)/g)].map((match) => match[1]!);
