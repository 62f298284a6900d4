/**
 * The audit index's tables. Bump `indexVersion` whenever they, or what is derived from an event
 * (audit-row.ts, `accessEventOf`), change: an index of another version is dropped and rebuilt
 * from the log, as it is derived data.
 */
export const indexVersion = '1';

export const indexSchema = `
-- log_position: the last event the index reflects; first_event_id: which log it was built from;
-- last_time: the time of the last row (rows' times never go backwards); version: indexVersion.
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;

-- One row per event of the log, keyed by its log position. time is epoch ms, made non-decreasing
-- along the log so that since/until select one stretch of positions.
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
  api_id         TEXT
);
CREATE INDEX IF NOT EXISTS events_account ON events (account_id, position) WHERE account_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_family ON events (family_id, position) WHERE family_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_api_login_id ON events (api_login_id, position) WHERE api_login_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_api_id ON events (api_id, position) WHERE api_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_type ON events (type, position);
CREATE INDEX IF NOT EXISTS events_time ON events (time);

-- For access-at: each event that issues or cuts tokens, as its access event (JSON), under the
-- grant it belongs to (a family, or one v1 token), or under none for an account-wide cut.
CREATE TABLE IF NOT EXISTS access_events (
  position   INTEGER PRIMARY KEY,
  account_id TEXT NOT NULL,
  grant_id   TEXT,
  event      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS access_events_grant ON access_events (grant_id, position) WHERE grant_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS access_events_account_wide ON access_events (account_id, position) WHERE grant_id IS NULL;

-- Each grant's span, from its first token's issue to its last token's expiry (epoch seconds), so
-- that access-at replays only the grants that can matter at the instant asked about.
CREATE TABLE IF NOT EXISTS grants (
  grant_id        TEXT PRIMARY KEY,
  account_id      TEXT NOT NULL,
  first_at        INTEGER NOT NULL,
  last_expires_at INTEGER NOT NULL,
  api_login_id    TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS grants_account ON grants (account_id, last_expires_at);
`;

export const indexTables = ['meta', 'events', 'access_events', 'grants'] as const;
