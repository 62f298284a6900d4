import type { AccountTokensRevoked, CredentialTokensRevoked, TokenRevoked, TokenRotated } from '@tessera/contracts';

/**
 * family id → lowest valid generation (or revoked). An entry is forgotten once every token it
 * rejects has expired: at the event's own `rejectsUntil` plus clock skew, whatever lifetime this
 * process is configured with. Memory follows the revocation rate, not history.
 *
 * An entry is a small object with two numbers and a flag, so no date (epoch seconds up to
 * JavaScript's last date) and no generation (up to 2^53) can overflow into the other. It replaces
 * a single packed number, forgetAt × 2^22 + generation, that lost generations once forgetAt
 * passed 2^31 (January 2038). Applying is a max() of each part: duplicates and out-of-order
 * delivery (Kafka partitions, replays) change nothing.
 */
class Entry {
  constructor(
    /** Epoch seconds; once it has passed, the entry can reject no unexpired token. */
    public forgetAt: number,
    /** Generations below it are rejected. */
    public lowestValid: number,
    public revoked: boolean,
  ) {}
}

export interface RevocationProjectionOptions {
  /** Seconds an entry is kept past the last expiry of the tokens it rejects. */
  readonly clockSkewSeconds?: number;
}

export type RevocationEvent = TokenRotated | TokenRevoked | AccountTokensRevoked | CredentialTokensRevoked;

/**
 * What `apply()` reads of each event. A log event is one; a receiver of Shared Signals, which
 * never sees the log's other fields (hashes, credential ids), builds these from the SETs.
 */
export type RevocationFacts =
  | Pick<TokenRotated, 'type' | 'familyId' | 'generation' | 'rejectsUntil' | 'accessExpiresAt'>
  | Pick<TokenRevoked, 'type' | 'familyId' | 'generation' | 'rejectsUntil' | 'accessExpiresAt'>
  | Pick<AccountTokensRevoked, 'type' | 'accountId' | 'notBefore' | 'rejectsUntil'>
  | Pick<CredentialTokensRevoked, 'type' | 'apiLoginId' | 'apiId' | 'notBefore' | 'rejectsUntil'>;

/**
 * A cut (docs/decisions/0011): tokens of an account, or of a client id, with `iat` before `notBefore`
 * are rejected until `forgetAt`. Cuts are operator actions, so there are few; they sit in maps of their own.
 */
class Cut {
  constructor(
    public forgetAt: number,
    public notBefore: number,
  ) {}
}

/** What a cut looks at in a token: its subject (the account), its client_id and its iat. */
export interface CutCandidate {
  readonly accountId: string;
  readonly clientId: string;
  /** Epoch seconds. */
  readonly issuedAt: number;
}

export class RevocationProjection {
  private readonly entries = new Map<string, Entry>();
  private readonly accountCuts = new Map<string, Cut>();
  /** Keyed by client id: API Login IDs and API IDs are random with distinct prefixes, so they never collide. */
  private readonly credentialCuts = new Map<string, Cut>();
  private readonly clockSkewSeconds: number;
  /** The latest time given to forgetExpired(): time only moves on, so nothing that expires by then is worth storing. */
  private forgottenUpTo = Number.NEGATIVE_INFINITY;

  constructor(options: RevocationProjectionOptions = {}) {
    this.clockSkewSeconds = options.clockSkewSeconds ?? 60;
  }

  /** Families and cuts held. */
  get size(): number {
    return this.entries.size + this.accountCuts.size + this.credentialCuts.size;
  }

  apply(event: RevocationEvent | RevocationFacts): void {
    if (event.type === 'AccountTokensRevoked') return this.applyCut(this.accountCuts, event.accountId, event);
    if (event.type === 'CredentialTokensRevoked') return this.applyCut(this.credentialCuts, event.apiLoginId ?? event.apiId, event);
    // rejectsUntilOf()'s rule, on the fields read: an event older than rejectsUntil implies accessExpiresAt.
    const forgetAt = (event.rejectsUntil ?? event.accessExpiresAt) + this.clockSkewSeconds;
    // Every token this event rejects has expired already: a rebuild over a long window stores only live entries.
    if (forgetAt <= this.forgottenUpTo) return;
    const revoked = event.type === 'TokenRevoked';
    const lowestValid = revoked ? 0 : event.generation;
    const entry = this.entries.get(event.familyId);
    if (entry === undefined) {
      this.entries.set(event.familyId, new Entry(forgetAt, lowestValid, revoked));
      return;
    }
    entry.lowestValid = Math.max(entry.lowestValid, lowestValid);
    entry.revoked ||= revoked;
    if (forgetAt > entry.forgetAt) {
      entry.forgetAt = forgetAt;
      // Move it to the back: Map order follows when entries were last extended, which is what forgetExpired() scans.
      this.entries.delete(event.familyId);
      this.entries.set(event.familyId, entry);
    }
  }

  /** True when a token of this family and generation has been rotated away or revoked. */
  isRejected(familyId: string, generation: number): boolean {
    const entry = this.entries.get(familyId);
    if (entry === undefined) return false;
    return entry.revoked || generation < entry.lowestValid;
  }

  /** True when a cut of the token's account or client id was made after the token was issued. */
  isCutOff(token: CutCandidate): boolean {
    // The common case, no cut at all, costs two size checks on the verification path.
    if (this.accountCuts.size === 0 && this.credentialCuts.size === 0) return false;
    const byAccount = this.accountCuts.get(token.accountId);
    if (byAccount !== undefined && token.issuedAt < byAccount.notBefore) return true;
    const byClient = this.credentialCuts.get(token.clientId);
    return byClient !== undefined && token.issuedAt < byClient.notBefore;
  }

  /** A max() of each part, like apply(): duplicates and any order change nothing. */
  private applyCut(cuts: Map<string, Cut>, key: string | undefined, event: Pick<AccountTokensRevoked, 'notBefore' | 'rejectsUntil'>): void {
    const forgetAt = event.rejectsUntil + this.clockSkewSeconds;
    if (key === undefined || forgetAt <= this.forgottenUpTo) return;
    const cut = cuts.get(key);
    if (cut === undefined) {
      cuts.set(key, new Cut(forgetAt, event.notBefore));
      return;
    }
    cut.forgetAt = Math.max(cut.forgetAt, forgetAt);
    cut.notBefore = Math.max(cut.notBefore, event.notBefore);
  }

  /**
   * Drops entries that can no longer reject an unexpired token; returns how many went. It scans
   * from the front and stops at the first entry still needed, so its cost follows what it drops.
   * An entry extended after one that lives longer (a TTL lowered since) waits behind it: kept
   * longer than needed, which rejects only tokens that have expired anyway.
   */
  forgetExpired(nowSeconds: number): number {
    this.forgottenUpTo = Math.max(this.forgottenUpTo, nowSeconds);
    let forgotten = 0;
    for (const [familyId, entry] of this.entries) {
      if (entry.forgetAt > nowSeconds) break;
      this.entries.delete(familyId);
      forgotten += 1;
    }
    // Cuts are few: a full scan.
    for (const cuts of [this.accountCuts, this.credentialCuts]) {
      for (const [key, cut] of cuts) {
        if (cut.forgetAt > nowSeconds) continue;
        cuts.delete(key);
        forgotten += 1;
      }
    }
    return forgotten;
  }
}
