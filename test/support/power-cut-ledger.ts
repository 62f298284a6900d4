/**
 * What a client of Tessera was told across power cuts, and what the machine must still hold for it:
 * the ledger of acknowledged work (every answer that was 200), the record (what the event log and
 * the archive hold after a cut), and the comparisons between them. No I/O here: the machine that
 * cuts the power (power-cut-machine.ts) feeds both sides and acts on what these functions find.
 */

/** The three token operations the load drives. */
export type Operation = 'issue' | 'refresh' | 'revoke';

/** One generation of a family as the client holds it: the pair an acknowledged issuance or refresh answered. */
export interface HeldPair {
  readonly generation: number;
  readonly accessToken: string;
  readonly refreshToken: string;
  /** Epoch ms: the access token's `exp`. */
  readonly accessExpiresAt: number;
  /**
   * Epoch ms, at the earliest: the refresh token lives TESSERA_REFRESH_TOKEN_TTL from its issuance,
   * which the server stamped (in whole seconds) after the request left.
   */
  readonly refreshExpiresAt: number;
  /** Epoch ms when the 200 arrived. */
  readonly acknowledgedAt: number;
  /** The cut during whose load it was acknowledged (1-based). */
  readonly cut: number;
}

export interface HeldFamily {
  readonly familyId: string;
  /** Every acknowledged generation, in order: [0] from the issuance, one more per acknowledged refresh. */
  readonly pairs: HeldPair[];
  /** Epoch ms of the acknowledged revocation. */
  revokedAt: number | undefined;
  /**
   * An operation sent and never answered (the power went first): it may have happened or not, so
   * nothing that depends on it is expected, and the family takes no more load.
   */
  inDoubt: Exclude<Operation, 'issue'> | undefined;
  /** An operation of the load is in flight on it. */
  busy: boolean;
}

/** What one cut's load got answered. */
export interface CutTally {
  readonly acknowledged: Record<Operation, number>;
  /** Operations that got no answer: in flight when the power went. */
  readonly unanswered: Record<Operation, number>;
  /** Answers that were neither 200 nor the power going: each one named. */
  readonly unexpected: string[];
}

const emptyCounts = (): Record<Operation, number> => ({ issue: 0, refresh: 0, revoke: 0 });

/** A refresh or revoke needs the refresh token alive for this long yet, so the load never sends an expired one. */
const usableMarginMs = 3_000;

export class Ledger {
  readonly families = new Map<string, HeldFamily>();
  private readonly tallies: CutTally[] = [];

  tally(cut: number): CutTally {
    while (this.tallies.length < cut) this.tallies.push({ acknowledged: emptyCounts(), unanswered: emptyCounts(), unexpected: [] });
    return this.tallies[cut - 1]!;
  }

  /** Acknowledged operations over every cut so far. */
  totals(): Record<Operation, number> {
    const sum = emptyCounts();
    for (const tally of this.tallies) for (const operation of ['issue', 'refresh', 'revoke'] as const) sum[operation] += tally.acknowledged[operation];
    return sum;
  }

  issued(familyId: string, pair: HeldPair): void {
    this.families.set(familyId, { familyId, pairs: [pair], revokedAt: undefined, inDoubt: undefined, busy: false });
    this.tally(pair.cut).acknowledged.issue += 1;
  }

  refreshed(family: HeldFamily, pair: HeldPair): void {
    family.pairs.push(pair);
    this.tally(pair.cut).acknowledged.refresh += 1;
  }

  revoked(family: HeldFamily, at: number, cut: number): void {
    family.revokedAt = at;
    this.tally(cut).acknowledged.revoke += 1;
  }

  unanswered(operation: Operation, cut: number, family?: HeldFamily): void {
    if (family !== undefined && operation !== 'issue') family.inDoubt = operation;
    this.tally(cut).unanswered[operation] += 1;
  }

  /** Families the load may refresh or revoke now: alive, not revoked, not in doubt, not busy. */
  usable(now: number): HeldFamily[] {
    const usable: HeldFamily[] = [];
    for (const family of this.families.values()) {
      if (family.busy || family.revokedAt !== undefined || family.inDoubt !== undefined) continue;
      if (current(family).refreshExpiresAt > now + usableMarginMs) usable.push(family);
    }
    return usable;
  }
}

/** The newest acknowledged pair. */
export const current = (family: HeldFamily): HeldPair => family.pairs[family.pairs.length - 1]!;

/** Epoch ms of the family's last acknowledged operation. */
export const lastAcknowledged = (family: HeldFamily): number => Math.max(current(family).acknowledgedAt, family.revokedAt ?? 0);

/** An event of a token family, as the log or the archive holds it. */
export interface RecordedFamilyEvent {
  readonly position: bigint;
  readonly stream: string;
  readonly type: string;
  readonly familyId: string | undefined;
  readonly generation: number | undefined;
}

const familyKey = (familyId: string, type: string, generation?: number) => (type === 'TokenRotated' ? `${familyId}|${type}|${generation}` : `${familyId}|${type}`);

/**
 * What the event log and the archive hold together after a cut (families' events only): an event
 * archived and removed from the hot log is still on the record; one in neither is lost.
 */
export class TheRecord {
  private readonly keys = new Set<string>();
  private readonly positions = new Map<bigint, RecordedFamilyEvent>();

  add(event: RecordedFamilyEvent): void {
    this.positions.set(event.position, event);
    if (event.familyId !== undefined) this.keys.add(familyKey(event.familyId, event.type, event.generation));
  }

  holds(familyId: string, type: 'TokenIssued' | 'TokenRotated' | 'TokenRevoked', generation?: number): boolean {
    return this.keys.has(familyKey(familyId, type, generation));
  }

  at(position: bigint): RecordedFamilyEvent | undefined {
    return this.positions.get(position);
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Every acknowledged operation whose event is on neither the log nor the archive. Families whose
 * last acknowledged operation is older than `since` are left out: their segment may have been
 * deleted for being past TESSERA_AUDIT_RETENTION, as it should be.
 */
export function lostFromTheRecord(ledger: Ledger, record: TheRecord, since: number): string[] {
  const lost: string[] = [];
  for (const family of ledger.families.values()) {
    if (lastAcknowledged(family) < since) continue;
    const [issued, ...refreshes] = family.pairs;
    if (!record.holds(family.familyId, 'TokenIssued')) lost.push(`family ${family.familyId}: its issuance, acknowledged at ${iso(issued!.acknowledgedAt)} (cut ${issued!.cut}), is in neither the log nor the archive`);
    for (const pair of refreshes) {
      if (!record.holds(family.familyId, 'TokenRotated', pair.generation)) {
        lost.push(`family ${family.familyId}: its refresh to generation ${pair.generation}, acknowledged at ${iso(pair.acknowledgedAt)} (cut ${pair.cut}), is in neither the log nor the archive`);
      }
    }
    if (family.revokedAt !== undefined && !record.holds(family.familyId, 'TokenRevoked')) {
      lost.push(`family ${family.familyId}: its revocation, acknowledged at ${iso(family.revokedAt)}, is in neither the log nor the archive`);
    }
  }
  return lost;
}

/** A revocation a Shared Signals receiver was sent (a session-revoked SET). */
export interface ToldRevocation {
  readonly familyId: string;
  readonly jti: string;
  /** The log event's id. */
  readonly txn: string;
  readonly receivedAt: number;
}

/** A message the relay published to the revocation topic. */
export interface PublishedEvent {
  readonly position: bigint;
  readonly stream: string;
  readonly type: string;
  readonly familyId: string | undefined;
  readonly generation: number | undefined;
  /** Epoch ms the log recorded it. */
  readonly recordedAt: number;
}

/**
 * What left the machine (SETs a receiver got, messages on the topic) must be on the record after
 * the cut: the world was told of it, so the log cannot have forgotten it.
 */
export function toldButNotRecorded(record: TheRecord, told: { readonly push: Iterable<ToldRevocation>; readonly poll: Iterable<ToldRevocation>; readonly topic: Iterable<PublishedEvent> }, since: number): string[] {
  const lost: string[] = [];
  for (const [receiver, revocations] of [['push', told.push], ['poll', told.poll]] as const) {
    for (const set of revocations) {
      if (set.receivedAt >= since && !record.holds(set.familyId, 'TokenRevoked')) lost.push(`the ${receiver} receiver got a SET (jti ${set.jti}) revoking family ${set.familyId}, whose revocation is in neither the log nor the archive`);
    }
  }
  for (const message of told.topic) {
    if (message.recordedAt < since) continue;
    const recorded = record.at(message.position);
    if (recorded === undefined || recorded.stream !== message.stream || recorded.type !== message.type) {
      lost.push(`the topic carries ${message.type} of ${message.stream} at log position ${message.position}, which ${recorded === undefined ? 'neither the log nor the archive holds' : `the record holds as ${recorded.type} of ${recorded.stream}`}`);
    }
  }
  return lost;
}

/** Each event (txn) must keep one jti across restarts: receivers drop duplicates by it. */
export function jtisThatChanged(revocations: Iterable<ToldRevocation>): string[] {
  const jtiOf = new Map<string, string>();
  const changed: string[] = [];
  for (const set of revocations) {
    const seen = jtiOf.get(set.txn);
    if (seen === undefined) jtiOf.set(set.txn, set.jti);
    else if (seen !== set.jti) changed.push(`event ${set.txn} (family ${set.familyId}) was sent as jti ${seen} and again as ${set.jti}`);
  }
  return changed;
}

/** A request whose answer the ledger dictates, to be made after the restart. */
export interface Expectation {
  readonly familyId: string;
  /** `access`: a protected request with the access token; `refresh`: refresh-oauth-token with the refresh token. */
  readonly presents: 'access' | 'refresh';
  readonly token: string;
  readonly status: 200 | 401;
  readonly why: string;
}

/** A token is checked only while it has this long to live, so an expiry in between never decides the answer. */
const aliveMarginMs = 2_000;

/**
 * What the ledger says each token held must get now. Revoked: the last access token and refresh
 * token are refused. Refreshed: the replaced access and refresh tokens are refused. Otherwise the
 * newest access token works. A family in doubt keeps only what holds whichever way its last
 * operation went. Current refresh tokens are never presented: a success would change the family.
 */
export function expectationsAt(ledger: Ledger, now: number): Expectation[] {
  const expectations: Expectation[] = [];
  const alive = (expiresAt: number) => expiresAt > now + aliveMarginMs;
  for (const family of ledger.families.values()) {
    const newest = current(family);
    const replaced = family.pairs.length > 1 ? family.pairs[family.pairs.length - 2] : undefined;
    if (family.revokedAt !== undefined) {
      const why = `revoked at ${iso(family.revokedAt)}`;
      if (alive(newest.accessExpiresAt)) expectations.push({ familyId: family.familyId, presents: 'access', token: newest.accessToken, status: 401, why });
      if (alive(newest.refreshExpiresAt)) expectations.push({ familyId: family.familyId, presents: 'refresh', token: newest.refreshToken, status: 401, why });
      continue;
    }
    if (replaced !== undefined) {
      const why = `replaced by generation ${newest.generation}, refreshed at ${iso(newest.acknowledgedAt)}`;
      if (alive(replaced.accessExpiresAt)) expectations.push({ familyId: family.familyId, presents: 'access', token: replaced.accessToken, status: 401, why });
      if (alive(replaced.refreshExpiresAt)) expectations.push({ familyId: family.familyId, presents: 'refresh', token: replaced.refreshToken, status: 401, why });
    }
    if (family.inDoubt === undefined && alive(newest.accessExpiresAt)) {
      expectations.push({ familyId: family.familyId, presents: 'access', token: newest.accessToken, status: 200, why: `generation ${newest.generation}, acknowledged at ${iso(newest.acknowledgedAt)}, neither replaced nor revoked` });
    }
  }
  return expectations;
}

/** The acknowledged revocations and rotations every receiver and the topic must get in the end. */
export function owedDeliveries(ledger: Ledger, since: number): { revocations: string[]; rotations: { familyId: string; generation: number }[] } {
  const revocations: string[] = [];
  const rotations: { familyId: string; generation: number }[] = [];
  for (const family of ledger.families.values()) {
    if (lastAcknowledged(family) < since) continue;
    if (family.revokedAt !== undefined) revocations.push(family.familyId);
    for (const pair of family.pairs.slice(1)) rotations.push({ familyId: family.familyId, generation: pair.generation });
  }
  return { revocations, rotations };
}
