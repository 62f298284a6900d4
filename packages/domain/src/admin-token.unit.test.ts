import { describe, expect, it } from 'vitest';
import type { AdminTokenEvent } from '@tessera/events';
import { decideAdminToken, evolveAdminToken, initialAdminTokenState, type AdminTokenCommand } from './admin-token.js';

const issue: AdminTokenCommand = { type: 'IssueAdminToken', adminTokenId: 'adm', name: 'ops', scopes: ['audit:read', 'audit:read', 'tokens:revoke'], tokenHash: 'h'.repeat(43), hashingKey: 'K'.repeat(22), now: 100 };
const revoke: AdminTokenCommand = { type: 'RevokeAdminToken', now: 200 };
const run = (history: AdminTokenEvent[], command: AdminTokenCommand) => decideAdminToken(command, history.reduce(evolveAdminToken, initialAdminTokenState()));

describe('admin token decider', () => {
  const issued = run([], issue);

  it('issues a token with its name, de-duplicated scopes, keyed hash and the key that made it', () => {
    expect(issued).toEqual([{ type: 'AdminTokenIssued', v: 1, adminTokenId: 'adm', name: 'ops', scopes: ['audit:read', 'tokens:revoke'], tokenHash: 'h'.repeat(43), hashingKey: 'K'.repeat(22), at: 100 }]);
  });

  it('records an expiry when the command has one, and none otherwise (absent: never expires)', () => {
    expect(run([], { ...issue, expiresAt: 700 })).toEqual([expect.objectContaining({ type: 'AdminTokenIssued', at: 100, expiresAt: 700 })]);
    expect(issued[0]).not.toHaveProperty('expiresAt');
  });

  it('refuses to issue into an existing token stream', () => {
    expect(() => run(issued, issue)).toThrow(expect.objectContaining({ code: 'ERR_ADMIN_TOKEN_EXISTS' }));
  });

  it('revokes an active token; a second revocation changes nothing; an unknown token is not found', () => {
    const revoked = run(issued, revoke);
    expect(revoked).toEqual([{ type: 'AdminTokenRevoked', v: 1, adminTokenId: 'adm', at: 200 }]);
    expect(run([...issued, ...revoked], revoke)).toEqual([]);
    expect(() => run([], revoke)).toThrow(expect.objectContaining({ code: 'ERR_ADMIN_TOKEN_NOT_FOUND' }));
  });
});
