import { streams, type EventMetadata, type FamilyEvent, type TokenCutEvent } from '@tessera/events';
import { DomainError, accountDecider, type AccountCommand } from '@tessera/domain';
import { EventStoreUnavailable, handleCommand, type CommandStore } from '@tessera/event-store';
import type { FamiliesReadModel } from './families-thread.js';
import { revokeFamiliesAs, revokeFamilyAs, type RevokedFamily } from './family-revocation.js';

/** Who asked, from where: written on every event an admin action appends, for the audit trail. */
export interface AdminAudit {
  readonly adminTokenId: string;
  readonly requestId: string;
  readonly sourceAddress: string;
}

export interface OperatorRevocationDeps {
  readonly store: CommandStore;
  readonly families: FamiliesReadModel;
  /** Epoch seconds. */
  readonly now: () => number;
  /** Called with each family event once durable, before the answer: the verifier in this process refuses the token at once. */
  readonly onFamilyEvent?: (event: FamilyEvent) => void;
  /** The same for a cut. */
  readonly onCut?: (event: TokenCutEvent) => void;
  /** How long to wait for the families read model to reach the cut (default 5 s). */
  readonly catchUpTimeoutMs?: number;
  /** The control region's fence (docs/decisions/0018): throws unless this region may write accounts now. */
  readonly checkAccountWrite?: () => void;
}

export type { RevokedFamily } from './family-revocation.js';

/**
 * Operator revocation: without any refresh token, through the command handler,
 * each event carrying the admin token's id, the request id and the source address. Each answer is
 * given only once the events are durable and applied in this process.
 */
export function createOperatorRevocation(deps: OperatorRevocationDeps) {
  const metadataOf = (audit: AdminAudit, accountId: string): EventMetadata => ({
    actor: `admin:${audit.adminTokenId}`,
    requestId: audit.requestId,
    sourceAddress: audit.sourceAddress,
    accountId,
  });

  const revokeFamily = (familyId: string, audit: AdminAudit): Promise<RevokedFamily> =>
    revokeFamilyAs(deps, familyId, (accountId) => metadataOf(audit, accountId));

  return {
    /** POST /admin/v1/families/{family_id}/revoke. Throws ERR_FAMILY_NOT_FOUND for a family never issued. */
    revokeFamily,

    /**
     * POST /admin/v1/accounts/{account_id}/revoke-tokens: first the account cut, which refuses every
     * access token of the account issued up to now, v5 and v1 alike; then every live family, so their
     * refresh tokens die too. Throws ERR_ACCOUNT_NOT_FOUND for an unknown account.
     */
    async revokeAccountTokens(accountId: string, audit: AdminAudit): Promise<{ revokedFamilies: number; tokensRevokedBefore: number }> {
      // The cut is an account event: only the control region writes one.
      deps.checkAccountWrite?.();
      const longestTokenLifetime = await deps.families.longestTokenLifetime();
      const { events, appended } = await handleCommand(deps.store, {
        stream: streams.account(accountId),
        decider: accountDecider,
        command: (state): AccountCommand => {
          if (state.status !== 'registered') throw new DomainError('ERR_ACCOUNT_NOT_FOUND', `no account ${accountId}`);
          return { type: 'RevokeAccountTokens', now: deps.now(), revokeTokens: { longestTokenLifetime } };
        },
        metadata: metadataOf(audit, accountId),
        onConflict: { retries: 3 },
      });
      const cut = events.find((event): event is TokenCutEvent => event.type === 'AccountTokensRevoked');
      if (cut) deps.onCut?.(cut);
      // Every family issued before the cut is in the read model once it has read the cut.
      const live = await deps.families.liveFamiliesOnceAt(appended?.position, accountId, deps.catchUpTimeoutMs ?? 5_000);
      if (live === undefined) {
        throw new EventStoreUnavailable('the admin read model did not reach the cut in time; the access tokens are cut, retry to revoke the families');
      }
      const revokedFamilies = await revokeFamiliesAs(deps, live, (familyAccountId) => metadataOf(audit, familyAccountId));
      return { revokedFamilies, tokensRevokedBefore: cut?.notBefore ?? deps.now() + 1 };
    },
  };
}

export type OperatorRevocation = ReturnType<typeof createOperatorRevocation>;
