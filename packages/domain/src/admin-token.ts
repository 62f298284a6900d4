import { adminTokenEventTypes, isEventOf, type AdminTokenEvent } from '@tessera/events';
import type { Decider } from './decider.js';
import { DomainError, assertNever } from './errors.js';

/**
 * One admin token for /admin/v1/* (its own stream, `admintoken-<id>`). The token itself never reaches
 * the domain: only its keyed hash.
 */
export type AdminTokenState =
  | { readonly status: 'none' }
  | { readonly status: 'active'; readonly adminTokenId: string }
  | { readonly status: 'revoked'; readonly adminTokenId: string; readonly revokedAt: number };

export const initialAdminTokenState = (): AdminTokenState => ({ status: 'none' });

export type AdminTokenCommand =
  | {
      readonly type: 'IssueAdminToken';
      readonly adminTokenId: string;
      readonly name: string;
      readonly scopes: readonly string[];
      readonly tokenHash: string;
      /** The fingerprint of the secret-hashing key `tokenHash` was made with. */
      readonly hashingKey: string;
      readonly now: number;
      /** Epoch seconds; undefined: the token never expires. */
      readonly expiresAt?: number | undefined;
    }
  | { readonly type: 'RevokeAdminToken'; readonly now: number };

export function evolveAdminToken(state: AdminTokenState, event: AdminTokenEvent): AdminTokenState {
  switch (event.type) {
    case 'AdminTokenIssued':
      return { status: 'active', adminTokenId: event.adminTokenId };
    case 'AdminTokenRevoked':
      return { status: 'revoked', adminTokenId: event.adminTokenId, revokedAt: event.at };
    default:
      return assertNever(event);
  }
}

export function decideAdminToken(command: AdminTokenCommand, state: AdminTokenState): AdminTokenEvent[] {
  switch (command.type) {
    case 'IssueAdminToken':
      if (state.status !== 'none') throw new DomainError('ERR_ADMIN_TOKEN_EXISTS', 'admin token already exists');
      return [
        {
          type: 'AdminTokenIssued',
          v: 1,
          adminTokenId: command.adminTokenId,
          name: command.name,
          scopes: [...new Set(command.scopes)],
          tokenHash: command.tokenHash,
          hashingKey: command.hashingKey,
          at: command.now,
          ...(command.expiresAt === undefined ? {} : { expiresAt: command.expiresAt }),
        },
      ];
    case 'RevokeAdminToken':
      if (state.status === 'none') throw new DomainError('ERR_ADMIN_TOKEN_NOT_FOUND', 'no such admin token');
      // Revoking twice changes nothing: what an operator repeating a command expects.
      if (state.status === 'revoked') return [];
      return [{ type: 'AdminTokenRevoked', v: 1, adminTokenId: state.adminTokenId, at: command.now }];
    default:
      return assertNever(command);
  }
}

export const adminTokenDecider: Decider<AdminTokenCommand, AdminTokenState, AdminTokenEvent> = {
  isEvent: (event) => isEventOf(adminTokenEventTypes, event),
  decide: decideAdminToken,
  evolve: evolveAdminToken,
  initialState: initialAdminTokenState,
};
