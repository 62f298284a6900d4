import { ArchiveReadInterrupted, type ArchivedEvent, type ArchiveReader } from '@tessera/archive';
import type { AccessEvent } from './access-at.js';
import type { AuditIndex } from './audit-index.js';
import type { AccessAtAnswer, AccessAtQuery, ArchivedGrant } from './index-access-at.js';
import type { EventPage } from './index-events.js';
import { AuditQueryOverBudget } from './query-budget.js';
import type { AuditRow } from './audit-row.js';
import type { EventQuery } from './event-query.js';

/**
 * The audit queries across the hot index and the archive, as one: rows in log order whichever
 * holds them, a position counted once (an event is in both for the moment between its segment's
 * record and its removal from the hot index), and cursors that name positions, so a page and the
 * next do not change as events move from hot to archive. One time budget covers both reads.
 */
export class AuditQueries {
  constructor(
    readonly index: AuditIndex,
    private readonly archive: ArchiveReader | undefined,
  ) {}

  async events(query: EventQuery, budgetMs?: number): Promise<EventPage> {
    const deadline = budgetMs === undefined ? undefined : performance.now() + budgetMs;
    const hot = this.index.events({ ...query, limit: query.limit + 1 }, budgetMs);
    const archived = await this.overBudget(budgetMs, () =>
      this.archive === undefined
        ? Promise.resolve([])
        : this.archive.events(
            {
              account: query.account,
              family: query.family,
              apiLoginId: query.apiLoginId,
              apiId: query.apiId,
              types: query.types,
              since: query.since,
              until: query.until,
              after: query.after,
              rows: query.limit + 1,
            },
            deadline,
          ),
    );
    const byPosition = new Map<string, AuditRow>();
    for (const event of archived) byPosition.set(event.position.toString(), auditRowOf(event));
    for (const row of hot.rows) byPosition.set(row.position, row);
    const rows = [...byPosition.values()].sort((a, b) => compare(BigInt(a.position), BigInt(b.position))).slice(0, query.limit + 1);
    const page = rows.slice(0, query.limit);
    const more = rows.length > query.limit ? BigInt(page[page.length - 1]!.position) : undefined;
    return { rows: page, more, logPosition: hot.logPosition };
  }

  async accessAt(accountId: string, at: number, query: AccessAtQuery = { limit: Number.MAX_SAFE_INTEGER }, budgetMs?: number): Promise<AccessAtAnswer | undefined> {
    const started = performance.now();
    const deadline = budgetMs === undefined ? undefined : started + budgetMs;
    const grants: ArchivedGrant[] = [];
    if (this.archive !== undefined) {
      const found = await this.overBudget(budgetMs, () => this.archive!.accessAt(accountId, at, deadline));
      // Casts below: ArchivedAccess is the archive's copy of the index's own AccessEvent JSON, kept
      // free of Tessera's types so that the archive package reads alone; the archiver wrote it from one.
      for (const [familyId, events] of found.families) {
        let firstAt = Number.MAX_SAFE_INTEGER;
        let lastExpiresAt = 0;
        for (const { access } of events) {
          if (access.kind !== 'generation-issued') continue;
          firstAt = Math.min(firstAt, access.issuedAt);
          lastExpiresAt = Math.max(lastExpiresAt, access.expiresAt);
        }
        grants.push({ grantId: familyId, firstAt, lastExpiresAt, events: events.map(({ position, access }) => ({ position, access: access as AccessEvent })) }); // cast: see above
      }
      for (const { position, access } of found.singles) {
        if (access.kind !== 'legacy-token-issued') continue;
        grants.push({ grantId: `@${position}`, firstAt: access.issuedAt, lastExpiresAt: access.expiresAt, events: [{ position, access: access as AccessEvent }] }); // cast: see above
      }
    }
    const left = budgetMs === undefined ? undefined : Math.max(1, budgetMs - (performance.now() - started));
    return this.index.accessAt(accountId, at, query, left, grants);
  }

  private async overBudget<T>(budgetMs: number | undefined, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (error instanceof ArchiveReadInterrupted && budgetMs !== undefined) throw new AuditQueryOverBudget(budgetMs);
      throw error;
    }
  }
}

/** An archived event as the audit trail's row: the same fields the index gives it. */
export function auditRowOf(event: ArchivedEvent): AuditRow {
  return {
    position: event.position.toString(),
    type: event.type,
    time: new Date(event.time).toISOString(),
    account_id: event.accountId ?? null,
    family_id: event.familyId ?? null,
    generation: event.generation ?? null,
    reason: event.reason ?? null,
    request_id: event.requestId ?? null,
    source_address: event.sourceAddress ?? null,
    actor: event.actor ?? null,
  };
}

const compare = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);
