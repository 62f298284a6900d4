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

  get reader(): LogReader {
    return logReader(accountEventTypes, ({ event }) => this.apply(event));
  }

  apply(event: AccountEvent): void {
    this.accounts.set(event.accountId, evolveAccount(this.accounts.get(event.accountId) ?? initialAccountState(), event));
  }

  /** Every registered account, in the order made. */
  *rows(): Generator<AccountRow> {
    for (const state of this.accounts.values()) {
      const summary = accountSummaryOf(state);
      if (summary !== undefined) yield accountRow(summary);
    }
  }

  row(accountId: string): AccountRow | undefined {
    const state = this.accounts.get(accountId);
    const summary = state === undefined ? undefined : accountSummaryOf(state);
    return summary === undefined ? undefined : accountRow(summary);
  }
}
