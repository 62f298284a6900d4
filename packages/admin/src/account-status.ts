import { streams, type AccountDisabled, type AccountEnabled, type AccountTokensRevoked, type EventMetadata, type FamilyEvent, type TokenCutEvent } from '@tessera/events';
import { DomainError, accountDecider, type AccountCommand } from '@tessera/domain';
import { EventStoreUnavailable, handleCommand, type CommandStore } from '@tessera/event-store';
import type { FamiliesReadModel } from './families-thread.js';
import { revokeFamiliesAs } from './family-revocation.js';

export interface AccountStatusDeps {
  readonly store: CommandStore;
  readonly families: FamiliesReadModel;
  /** Epoch seconds. */
  readonly now: () => number;
  /** Called with each family event once durable, before the answer: the verifier in this process refuses the token at once. */
  readonly onFamilyEvent?: ((event: FamilyEvent) => void) | undefined;
  /** The same for the disable's cut. */
  readonly onCut?: ((event: TokenCutEvent) => void) | undefined;
  /** The same for the status change: the issuer in this process refuses (or serves again) the account's token requests at once. */
  readonly onStatusChange?: ((event: AccountDisabled | AccountEnabled) => void) | undefined;
  /** How long to wait for the families read model to reach the disable (default 5 s). */
  readonly catchUpTimeoutMs?: number;
  /** The control region's fence (docs/decisions/0018): throws unless this region may write accounts now. */
  readonly checkAccountWrite?: (() => void) | undefined;
}

/** Who changes the account's status, from where: on every event appended, for the audit trail. */
export interface StatusChangeAuthor {
  /** `cli`, or `admin:<admin token id>`. */
  readonly actor: string;
  readonly requestId?: string | undefined;
  readonly sourceAddress?: string | undefined;
}

export interface StatusChange {
  readonly accountId: string;
  readonly disabled: boolean;
  /** False when the account already had that status: nothing was appended. */
  readonly changed: boolean;
  /** Disable: the live families this call revoked. */
  readonly revokedFamilies: number;
  /** Disable: access tokens issued before this time (epoch seconds) are refused, whatever the account's status later. */
  readonly tokensRevokedBefore?: number;
}

/**
 * Disabling and enabling an account (docs/decisions/0030). Disabling appends `AccountDisabled`
 * and a cut of the account's access tokens, then revokes every live family, as the operator's
 * revoke-tokens does: verifiers refuse the live tokens through the cut and the revocations they
 * already follow, and enabling later brings back none of them. While disabled, issuers answer
 * the account's token requests and refreshes as they answer an unknown client.
 */
export function createAccountStatus(deps: AccountStatusDeps) {
  const metadataOf = (author: StatusChangeAuthor, accountId: string): EventMetadata => ({
    actor: author.actor,
    ...(author.requestId === undefined ? {} : { requestId: author.requestId }),
    ...(author.sourceAddress === undefined ? {} : { sourceAddress: author.sourceAddress }),
    accountId,
  });

  async function change(accountId: string, author: StatusChangeAuthor, command: () => AccountCommand) {
    // An account event: only the control region writes one.
    deps.checkAccountWrite?.();
    return handleCommand(deps.store, {
      stream: streams.account(accountId),
      decider: accountDecider,
      command: (state): AccountCommand => {
        if (state.status !== 'registered') throw new DomainError('ERR_ACCOUNT_NOT_FOUND', `no account ${accountId}`);
        return command();
      },
      metadata: metadataOf(author, accountId),
      onConflict: { retries: 3 },
    });
  }

  return {
    /** Throws ERR_ACCOUNT_NOT_FOUND for an unknown account. Disabling a disabled account changes nothing. */
    async disable(accountId: string, input: { readonly reason?: string | undefined }, author: StatusChangeAuthor): Promise<StatusChange> {
      // Asked once, before the command: a retry after a conflict decides with the same figure.
      const longestTokenLifetime = await deps.families.longestTokenLifetime();
      const { events, appended } = await change(accountId, author, () => ({
        type: 'DisableAccount',
        reason: input.reason,
        actor: author.actor,
        now: deps.now(),
        revokeTokens: { longestTokenLifetime },
      }));
      for (const event of events) if (event.type === 'AccountDisabled') deps.onStatusChange?.(event);
      const cut = events.find((event): event is AccountTokensRevoked => event.type === 'AccountTokensRevoked');
      if (cut) deps.onCut?.(cut);
      // Every family issued before the disable is in the read model once it has read the disable. A
      // disable of a disabled account appends nothing but still revokes what is live: a first disable
      // whose revocations failed half-way is finished by asking again.
      const live = await deps.families.liveFamiliesOnceAt(appended?.position, accountId, deps.catchUpTimeoutMs ?? 5_000);
      if (live === undefined) {
        throw new EventStoreUnavailable('the families read model did not reach the disable in time; the account is disabled and its access tokens cut, disable it again to revoke its families');
      }
      const revokedFamilies = await revokeFamiliesAs(deps, live, (familyAccountId) => metadataOf(author, familyAccountId));
      return { accountId, disabled: true, changed: cut !== undefined, revokedFamilies, ...(cut ? { tokensRevokedBefore: cut.notBefore } : {}) };
    },

    /** Throws ERR_ACCOUNT_NOT_FOUND for an unknown account. Tokens and families from before the disable stay refused. */
    async enable(accountId: string, author: StatusChangeAuthor): Promise<StatusChange> {
      const { events } = await change(accountId, author, () => ({ type: 'EnableAccount', actor: author.actor, now: deps.now() }));
      for (const event of events) if (event.type === 'AccountEnabled') deps.onStatusChange?.(event);
      return { accountId, disabled: false, changed: events.length > 0, revokedFamilies: 0 };
    },
  };
}

export type AccountStatus = ReturnType<typeof createAccountStatus>;

/** A status change as the admin API answers it and `tessera accounts disable|enable --json` prints it. */
export interface AccountStatusAnswer {
  readonly account_id: string;
  readonly status: 'enabled' | 'disabled';
  /** False when the account already had this status: nothing was recorded. */
  readonly changed: boolean;
  /** The live token families this call revoked (disable only; 0 on enable). */
  readonly revoked_families: number;
  /** Disable: access tokens of the account issued before this instant are refused for good. */
  readonly tokens_revoked_before?: string;
}

export function accountStatusAnswer(change: StatusChange): AccountStatusAnswer {
  return {
    account_id: change.accountId,
    status: change.disabled ? 'disabled' : 'enabled',
    changed: change.changed,
    revoked_families: change.revokedFamilies,
    ...(change.tokensRevokedBefore === undefined ? {} : { tokens_revoked_before: new Date(change.tokensRevokedBefore * 1000).toISOString() }),
  };
}
