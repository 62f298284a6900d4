/**
 * Which events may leave the hot log, and when (docs/decisions/0017). Pure: the events, the time
 * and the settings are passed in.
 *
 * - **Kept for good**: accounts, signing keys, admin tokens, the secret-hashing key, the archive's
 *   trust anchors (its keys and manifest heads: an archive cannot vouch for itself), and any
 *   stream of a kind not named here (a stream kind added later stays until someone decides).
 * - **Closing streams** (`tokenfamily-`, and `revocations-<familyId>`, a revocation of another
 *   region's family recorded here): archived whole once closed, when no token the family issued can
 *   still be valid (every access and refresh token expired, and every revocation past the last
 *   expiry it rejects, plus clock skew), and its last event is older than the hot window.
 * - **Rolling streams** (`legacytokens-`, `authfailures-`, `mirroredrevocations-`, `ssfverifications-`, `ssfdelivery`): they never close; their
 *   events older than the hot window leave it, each once it can reject or admit nothing any more,
 *   except the stream's newest event, which stays so that the stream's revisions go on from it.
 * - **Snapshotted streams** (`ssfstream-`): a Shared Signals stream's decider appends a snapshot of
 *   the whole stream every so many events; the events before its newest snapshot leave the hot log
 *   once older than the hot window. The snapshot and what follows it stay: every fold of the stream
 *   can begin there, so its replay stays bounded however often its subjects come and go.
 */
export const closingStreamPrefixes = ['tokenfamily-', 'revocations-'] as const;
export const rollingStreamPrefixes = ['legacytokens-', 'authfailures-', 'mirroredrevocations-', 'ssfverifications-', 'ssfdelivery'] as const;
export const snapshottedStreamPrefixes = ['ssfstream-'] as const;
/** The event that holds the whole of a snapshotted stream. */
const snapshotEventTypes: ReadonlySet<unknown> = new Set(['SsfStreamSnapshotted']);
export const keptStreamPrefixes = ['account-', 'signingkeys', 'admintoken-', 'secrethashingkey', 'archivetrust'] as const;

export type StreamRetention = 'kept' | 'closing' | 'rolling' | 'snapshotted';

export function retentionOf(stream: string): StreamRetention {
  if (closingStreamPrefixes.some((prefix) => stream.startsWith(prefix))) return 'closing';
  if (rollingStreamPrefixes.some((prefix) => stream.startsWith(prefix))) return 'rolling';
  if (snapshottedStreamPrefixes.some((prefix) => stream.startsWith(prefix))) return 'snapshotted';
  return 'kept';
}

export interface RetentionSettings {
  /** TESSERA_HOT_RETENTION, seconds. */
  readonly hotWindowSeconds: number;
  /** TESSERA_CLOCK_SKEW, seconds. */
  readonly clockSkewSeconds: number;
}

/** An event as the rule sees it: its payload's fields by name, and when the log recorded it. */
export interface RetainedEvent {
  readonly position: bigint;
  readonly revision: bigint;
  /** Epoch milliseconds. */
  readonly recordedAt: number;
  readonly event: Readonly<Record<string, unknown>>;
}

/**
 * The last second at which anything an event says can still matter to a verifier: the latest of
 * the expiries and rejection times it carries (epoch seconds); undefined when it carries none.
 */
export function mattersUntil(event: Readonly<Record<string, unknown>>): number | undefined {
  let latest: number | undefined;
  for (const field of ['accessExpiresAt', 'refreshExpiresAt', 'rejectsUntil', 'expiresAt']) {
    const value = event[field];
    if (typeof value === 'number' && Number.isFinite(value)) latest = latest === undefined ? value : Math.max(latest, value);
  }
  return latest;
}

/**
 * When a closing stream is closed: the latest time any of its events matters until, plus skew
 * (epoch seconds). Family events are fat, so the last event alone would do for tokens; every event
 * is looked at so that a rotation's rejection of an earlier, longer-lived token is never missed.
 */
export function closedAt(events: readonly RetainedEvent[], settings: RetentionSettings): number | undefined {
  let latest: number | undefined;
  for (const { event } of events) {
    const until = mattersUntil(event);
    if (until !== undefined) latest = latest === undefined ? until : Math.max(latest, until);
  }
  return latest === undefined ? undefined : latest + settings.clockSkewSeconds;
}

/** The positions of a stream's events that may leave the hot log now (epoch milliseconds), in log order. */
export function removableEvents(stream: string, events: readonly RetainedEvent[], nowMs: number, settings: RetentionSettings): RetainedEvent[] {
  const kind = retentionOf(stream);
  if (kind === 'kept' || events.length === 0) return [];
  const windowStart = nowMs - settings.hotWindowSeconds * 1000;
  const nowSeconds = Math.floor(nowMs / 1000);
  if (kind === 'closing') {
    const last = events[events.length - 1]!;
    const closed = closedAt(events, settings);
    // A family that names no expiry at all is not one this rule knows how to close: it stays.
    if (closed === undefined || closed > nowSeconds || last.recordedAt >= windowStart) return [];
    return [...events];
  }
  if (kind === 'snapshotted') {
    let snapshot: bigint | undefined;
    for (const { revision, event } of events) if (snapshotEventTypes.has(event.type) && (snapshot === undefined || revision > snapshot)) snapshot = revision;
    return snapshot === undefined ? [] : events.filter((candidate) => candidate.revision < snapshot && candidate.recordedAt < windowStart);
  }
  const newest = events.reduce((a, b) => (b.revision > a.revision ? b : a));
  return events.filter((candidate) => {
    if (candidate === newest || candidate.recordedAt >= windowStart) return false;
    const until = mattersUntil(candidate.event);
    return until === undefined || until + settings.clockSkewSeconds <= nowSeconds;
  });
}
