import type { LegacyTokenIssued, RecordedEvent, TesseraEventType, TokenIssued, TokenRotated } from '@tessera/events';
import type { LogReader } from '@tessera/event-store';

/** The events that issue an access token (v5 or v1). */
export const tokenIssuingTypes = ['TokenIssued', 'TokenRotated', 'LegacyTokenIssued'] as const satisfies readonly TesseraEventType[];

/** Seconds from the `iat` to the `exp` of the access token an event issued, as the event says. */
export function tokenLifetimeOf(event: TokenIssued | TokenRotated | LegacyTokenIssued): number {
  return event.type === 'LegacyTokenIssued' ? event.expiresAt - event.issuedAt : event.accessExpiresAt - event.issuedAt;
}

/**
 * The admin API's small read model of tokens: which families of an account are
 * still live, to revoke them all, and the longest token lifetime the log shows, which a cut must
 * outlive (docs/decisions/0011). It follows every token event from the start of the log, and holds
 * only families that can still produce or carry a usable token: not revoked, and with a refresh
 * token or an access token unexpired. Memory follows the live families, a Map entry each: a family
 * already dead when its event is read (most of a long history) is never stored, so reading the
 * whole log holds no more than the families alive at its end.
 */
/**
 * Heap bytes per live family the model may hold (docs/operations.md "Memory"): measured ~175–195
 * when an account holds many families, ~390 when each family is its account's only one (the
 * account's id and its entry are then the family's alone).
 */
export const familiesModelBudget = { bytesPerFamily: 240, bytesPerFamilyOfItsOwnAccount: 480 } as const;

export class AccountFamilies implements LogReader {
  readonly types: readonly TesseraEventType[] = [...tokenIssuingTypes, 'TokenRevoked', 'AccountTokensRevoked'];
  /** family id → its account and when it stops mattering; Map order is the order entries were last extended. */
  private readonly families = new Map<string, { readonly account: AccountEntry; forgetAt: number }>();
  /**
   * account id → its live families. Each family points at this one entry rather than at the account id
   * its event carried, so an account's id is held once, not once per family.
   */
  private readonly byAccount = new Map<string, AccountEntry>();
  private longest = 0;
  private position: bigint | undefined;
  private readonly waiters = new Set<{ readonly position: bigint; readonly resolve: () => void }>();

  /** `now`: epoch seconds, to leave out families dead already when read; without it every family is kept until forgetExpired(). */
  constructor(private readonly now?: () => number) {}

  apply(recorded: RecordedEvent): void {
    const { event } = recorded;
    switch (event.type) {
      case 'TokenIssued':
      case 'TokenRotated':
        this.longest = Math.max(this.longest, tokenLifetimeOf(event));
        this.extendOrForget(event.familyId, event.accountId, Math.max(event.refreshExpiresAt, event.accessExpiresAt));
        break;
      case 'TokenRevoked':
        this.remove(event.familyId);
        break;
      case 'LegacyTokenIssued':
        this.longest = Math.max(this.longest, tokenLifetimeOf(event));
        break;
      default:
        // A cut moves the position on, which is what revokeAccountTokens waits for.
        break;
    }
    this.position = recorded.position;
    for (const waiter of this.waiters) {
      if (waiter.position <= recorded.position) {
        this.waiters.delete(waiter);
        waiter.resolve();
      }
    }
  }

  /** The families of the account that are not revoked and can still produce or carry a token at `nowSeconds`. */
  liveFamilies(accountId: string, nowSeconds: number): string[] {
    const familyIds = this.byAccount.get(accountId)?.families;
    const listed = familyIds === undefined ? [] : typeof familyIds === 'string' ? [familyIds] : [...familyIds];
    return listed.filter((familyId) => (this.families.get(familyId)?.forgetAt ?? 0) > nowSeconds);
  }

  /**
   * One page of the account's live families in family id order, after the family id `after`: the
   * admin list's page, worked out here (on the families thread) so that the request thread never
   * sorts an account's every family.
   */
  liveFamiliesPage(accountId: string, nowSeconds: number, after: string | undefined, limit: number): { familyIds: string[]; more: boolean } {
    const ids = this.liveFamilies(accountId, nowSeconds)
      .filter((familyId) => after === undefined || familyId > after)
      .sort();
    return { familyIds: ids.slice(0, limit), more: ids.length > limit };
  }

  /** Seconds: the longest exp − iat among every access token (v5 or v1) read so far; 0 before any. */
  get longestTokenLifetime(): number {
    return this.longest;
  }

  get size(): number {
    return this.families.size;
  }

  /** Position of the last event applied. */
  get lastPosition(): bigint | undefined {
    return this.position;
  }

  /** Resolves once an event at or after `position` has been applied; false if that takes longer than `timeoutMs`. */
  async reached(position: bigint, timeoutMs: number): Promise<boolean> {
    if (this.position !== undefined && this.position >= position) return true;
    let waiter: { position: bigint; resolve: () => void } | undefined;
    let timer: NodeJS.Timeout | undefined;
    const reached = new Promise<boolean>((resolve) => {
      waiter = { position, resolve: () => resolve(true) };
      this.waiters.add(waiter);
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await reached;
    } finally {
      clearTimeout(timer);
      this.waiters.delete(waiter!);
    }
  }

  /** Drops families that can no longer produce or carry a token; scans from the front and stops at the first still needed. */
  forgetExpired(nowSeconds: number): number {
    let forgotten = 0;
    for (const [familyId, family] of this.families) {
      if (family.forgetAt > nowSeconds) break;
      this.remove(familyId);
      forgotten += 1;
    }
    return forgotten;
  }

  /** A family whose tokens are all expired by now is dropped rather than kept until the next forgetExpired(). */
  private extendOrForget(familyId: string, accountId: string, forgetAt: number): void {
    if (this.now !== undefined && forgetAt <= this.now()) this.remove(familyId);
    else this.extend(familyId, accountId, forgetAt);
  }

  private extend(familyId: string, accountId: string, forgetAt: number): void {
    const family = this.families.get(familyId);
    if (family === undefined) {
      let account = this.byAccount.get(accountId);
      if (account === undefined) {
        account = { accountId, families: familyId };
        this.byAccount.set(accountId, account);
      } else if (typeof account.families === 'string') account.families = new Set([account.families, familyId]);
      else account.families.add(familyId);
      this.families.set(familyId, { account, forgetAt });
      return;
    }
    family.forgetAt = Math.max(family.forgetAt, forgetAt);
    // Move it to the back, so forgetExpired() finds the oldest first.
    this.families.delete(familyId);
    this.families.set(familyId, family);
  }

  private remove(familyId: string): void {
    const family = this.families.get(familyId);
    if (family === undefined) return;
    this.families.delete(familyId);
    const { account } = family;
    if (typeof account.families !== 'string') account.families.delete(familyId);
    if (typeof account.families === 'string' || account.families.size === 0) this.byAccount.delete(account.accountId);
  }
}

/** One account's live families: its one family id, or a Set once it has two (most accounts hold one, and a Set costs ~300 bytes). */
interface AccountEntry {
  readonly accountId: string;
  families: string | Set<string>;
}
