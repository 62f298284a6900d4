import type Database from 'better-sqlite3';
import { accessAt, type AccessAt, type AccessEvent } from './access-at.js';
import { accessGrantsFrom, accessGrantsSql, type AccessAtCursor, type AccessGrantsParameters } from './access-grants.js';
import type { IndexMeta } from './index-meta.js';
import type { QueryBudget } from './query-budget.js';

export interface AccessAtAnswer extends AccessAt {
  readonly logPosition: bigint | undefined;
  /** Where the next page starts, when more grants of the account may bear on the instant. */
  readonly more: AccessAtCursor | undefined;
}

export interface AccessAtQuery {
  /** Grants per page (families and v1 tokens); the answer names at most as many. */
  readonly limit: number;
  readonly after?: AccessAtCursor | undefined;
}

/** A grant found in the archive for access-at: a family (by its id) or a v1 token (`@<position>`), with its access events. */
export interface ArchivedGrant {
  readonly grantId: string;
  readonly firstAt: number;
  readonly lastExpiresAt: number;
  readonly events: readonly { readonly position: bigint; readonly access: AccessEvent }[];
}

const isAfter = (grant: { lastExpiresAt: number; grantId: string }, after: AccessAtCursor) =>
  grant.lastExpiresAt > after.lastExpiresAt || (grant.lastExpiresAt === after.lastExpiresAt && grant.grantId > after.grantId);

/** The access-at query over the index: which of an account's tokens were usable at an instant, a page of grants at a time. */
export class IndexAccessAt {
  private readonly statements;

  /** `budget` is made first: these statements call its function. */
  constructor(
    private readonly db: Database.Database,
    private readonly meta: IndexMeta,
    private readonly budget: QueryBudget,
  ) {
    this.statements = {
      knownAccount: db.prepare<[string], { found: number }>('SELECT 1 AS found FROM events WHERE account_id = ? LIMIT 1'),
      // Plans are pinned (INDEXED BY) where one plan is always right: they must not depend on
      // statistics gathered when the index was small.
      accountSince: db.prepare<[string], number>('SELECT time FROM events INDEXED BY events_account WHERE account_id = ? ORDER BY position LIMIT 1').pluck(),
      accessCuts: db
        .prepare<[{ account: string; at: number; never: number }], string>(
          `SELECT e.access FROM grants g INDEXED BY grants_account JOIN events e ON e.position = g.position
            WHERE tessera_in_budget() AND g.account_id = @account AND g.last_expires_at >= @never AND g.first_at <= @at
            ORDER BY e.position`,
        )
        .pluck(),
      accessGrants: db
        .prepare<[AccessGrantsParameters], [grantId: string, lastExpiresAt: bigint, position: bigint | null]>(accessGrantsSql)
        .raw(true)
        .safeIntegers(true),
      familyAccess: db
        .prepare<[string], [position: bigint, access: string]>(
          'SELECT position, access FROM events INDEXED BY events_family WHERE tessera_in_budget() AND family_id = ? AND access IS NOT NULL ORDER BY position',
        )
        .raw(true)
        .safeIntegers(true),
      singleAccess: db.prepare<[bigint], string>('SELECT access FROM events WHERE position = ?').pluck(),
    };
  }

  /**
   * Which of the account's tokens were usable at `at` (epoch seconds), one page of grants at a
   * time: the grants whose span covers the instant, in the order they expire from it on (those
   * found first are the ones that lived around `at`), each replayed from its access events, with
   * the account's cuts. Undefined for an account the index has never seen. AuditQueryOverBudget
   * past `budgetMs`.
   */
  answer(accountId: string, at: number, query: AccessAtQuery, budgetMs: number | undefined, archived: readonly ArchivedGrant[]): AccessAtAnswer | undefined {
    const { statements } = this;
    return this.budget.within(budgetMs, () =>
      this.db.transaction((): AccessAtAnswer | undefined => {
        if (statements.knownAccount.get(accountId) === undefined) return undefined;
        const logPosition = this.meta.position();
        // Before the account's first event nothing of it existed: no grant needs a look.
        const since = statements.accountSince.get(accountId);
        if (since === undefined || at * 1000 < since) return { families: [], legacyTokens: [], logPosition, more: undefined };
        const never = Number.MAX_SAFE_INTEGER;
        const after = query.after ?? { lastExpiresAt: 0, grantId: '' };
        const limit = Math.min(query.limit, Number.MAX_SAFE_INTEGER - 1);
        const hot = statements.accessGrants.all({ account: accountId, at, never, ...accessGrantsFrom(at, query.after), limit: limit + 1 });
        // The archive's grants join the hot ones in the same order, so a page and its cursor do not
        // change as a family moves from the hot index to the archive; one found in both counts once.
        const merged = new Map<string, { grantId: string; lastExpiresAt: number; position: bigint | null; archived?: ArchivedGrant }>();
        for (const [grantId, lastExpiresAt, position] of hot) merged.set(grantId, { grantId, lastExpiresAt: Number(lastExpiresAt), position });
        for (const grant of archived) {
          if (grant.lastExpiresAt <= at || grant.firstAt > at || !isAfter(grant, after)) continue;
          const known = merged.get(grant.grantId);
          merged.set(grant.grantId, { grantId: grant.grantId, lastExpiresAt: Math.max(grant.lastExpiresAt, known?.lastExpiresAt ?? 0), position: known?.position ?? null, archived: grant });
        }
        const grants = [...merged.values()].sort((a, b) => a.lastExpiresAt - b.lastExpiresAt || (a.grantId < b.grantId ? -1 : a.grantId > b.grantId ? 1 : 0)).slice(0, limit + 1);
        const page = grants.slice(0, limit);
        const access: string[] = statements.accessCuts.all({ account: accountId, at, never });
        const events: { position: bigint; access: AccessEvent }[] = [];
        for (const grant of page) {
          const byPosition = new Map<bigint, AccessEvent>();
          for (const archivedEvent of grant.archived?.events ?? []) byPosition.set(archivedEvent.position, archivedEvent.access);
          // Casts: the index's own JSON of an AccessEvent; an index of another version is rebuilt, never read.
          if (grant.archived === undefined || !grant.grantId.startsWith('@')) {
            if (!grant.grantId.startsWith('@')) for (const [position, json] of statements.familyAccess.all(grant.grantId)) byPosition.set(position, JSON.parse(json) as AccessEvent);
            else if (grant.position !== null) {
              const single = statements.singleAccess.get(grant.position);
              if (single !== undefined) byPosition.set(grant.position, JSON.parse(single) as AccessEvent); // cast: as above
            }
          }
          for (const [position, event] of byPosition) events.push({ position, access: event });
        }
        events.sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
        const last = page[page.length - 1];
        const more = grants.length > limit && last !== undefined ? { lastExpiresAt: last.lastExpiresAt, grantId: last.grantId } : undefined;
        // Cast: the index's own JSON of an AccessEvent (written by IndexIngest); an index of another version is rebuilt, never read.
        return { ...accessAt([...access.map((json) => JSON.parse(json) as AccessEvent), ...events.map((event) => event.access)], at), logPosition, more };
      })(),
    );
  }
}
