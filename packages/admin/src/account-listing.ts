import { accountRow, accountSummaryOf, type AccountRow } from '@tessera/accounts';
import { evolveAccount, initialAccountState, type AccountState } from '@tessera/domain';
import { accountEventTypes, type AccountEvent } from '@tessera/events';
import { logReader, type LogReader } from '@tessera/event-store';

/**
 * The accounts as the admin API lists them, folded as the log is followed (a LogReader), so a list
 * or a lookup costs the page it answers, not a read of every account event of the log. In the
 * order the accounts were made (a Map keeps the order of first insertion). An account made or
 * changed by this process is here before its answer: the routes wait for the process to apply
 * their append.
 */
export class AccountListing {
  private readonly accounts = new Map<string, AccountState>();
  /** Account ids in the order made, and each one's place in it: a page resumes at its cursor without a walk. */
  private readonly order: string[] = [];
  private readonly placeOf = new Map<string, number>();

  get reader(): LogReader {
    return logReader(accountEventTypes, ({ event }) => this.apply(event));
  }

  apply(event: AccountEvent): void {
    if (!this.placeOf.has(event.accountId)) {
      this.placeOf.set(event.accountId, this.order.length);
      this.order.push(event.accountId);
    }
    this.accounts.set(event.accountId, evolveAccount(this.accounts.get(event.accountId) ?? initialAccountState(), event));
  }

  /**
   * The registered accounts made after the account `after` (from the first without it), in the order
   * made; undefined when `after` names no account. Each row is folded as it is reached, so a page
   * costs the rows it walks.
   */
  rowsAfter(after?: string): Iterable<AccountRow> | undefined {
    const place = after === undefined ? -1 : this.placeOf.get(after);
    if (place === undefined) return undefined;
    return this.rowsFrom(place + 1);
  }

  private *rowsFrom(start: number): Generator<AccountRow> {
    for (let place = start; place < this.order.length; place += 1) {
      const row = this.row(this.order[place]!);
      if (row !== undefined) yield row;
    }
  }

  row(accountId: string): AccountRow | undefined {
    const state = this.accounts.get(accountId);
    const summary = state === undefined ? undefined : accountSummaryOf(state);
    return summary === undefined ? undefined : accountRow(summary);
  }
}
