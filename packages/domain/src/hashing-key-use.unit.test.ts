import { describe, expect, it } from 'vitest';
import type { AccountEvent, AdminTokenEvent, FamilyEvent } from '@tessera/contracts';
import { HashingKeyUse, noDependents } from './hashing-key-use.js';

const [original, next] = ['O'.repeat(22), 'N'.repeat(22)];
const h = 'h'.repeat(43);
const t0 = 1_800_000_000;
const family = { accountId: 'acct', credentialId: 'c1', apiLoginId: 'login', refreshTokenHash: h, jti: 'j', scope: [], accessExpiresAt: t0 + 3600 };

function used(events: (AccountEvent | FamilyEvent | AdminTokenEvent)[]) {
  const use = new HashingKeyUse();
  for (const event of events) use.apply(event);
  return use;
}

describe('what depends on each secret-hashing key', () => {
  const history: (AccountEvent | FamilyEvent | AdminTokenEvent)[] = [
    // Written before keys were named: the log's original key.
    { type: 'ApiCredentialIssued', v: 1, accountId: 'acct', credentialId: 'c1', apiLoginId: 'login', transactionKeyHash: h, at: t0 },
    { type: 'LegacyCredentialIssued', v: 1, accountId: 'acct', credentialId: 'l1', apiId: 'tla', apiKeyHash: h, at: t0 },
    { type: 'AdminTokenIssued', v: 1, adminTokenId: 'adm1', name: 'ops', scopes: ['audit:read'], tokenHash: h, at: t0 },
    { type: 'TokenIssued', v: 1, ...family, familyId: 'f1', generation: 0, issuedAt: t0, refreshExpiresAt: t0 + 86_400 },
    // After the rotation: new hashes name the new key.
    { type: 'TokenIssued', v: 1, ...family, familyId: 'f2', generation: 0, hashingKey: next, issuedAt: t0 + 10, refreshExpiresAt: t0 + 10 + 86_400 },
    { type: 'AdminTokenIssued', v: 1, adminTokenId: 'adm2', name: 'ops2', scopes: ['audit:read'], tokenHash: h, hashingKey: next, at: t0 + 10 },
  ];

  it('counts active credentials, live families and active admin tokens per key; a hash that names no key counts for the original', () => {
    const dependents = used(history).dependents(t0 + 20, original);
    expect(dependents.get(original)).toEqual({ transactionKeys: 1, apiKeys: 1, refreshTokenFamilies: 1, adminTokens: 1 });
    expect(dependents.get(next)).toEqual({ ...noDependents, refreshTokenFamilies: 1, adminTokens: 1 });
  });

  it('a rotated Transaction Key, a revoked API Key and admin token, and a revoked family depend on nothing', () => {
    const dependents = used([
      ...history,
      { type: 'ApiCredentialIssued', v: 1, accountId: 'acct', credentialId: 'c2', apiLoginId: 'login', transactionKeyHash: h, hashingKey: next, at: t0 + 20 },
      { type: 'ApiCredentialRevoked', v: 1, accountId: 'acct', credentialId: 'c1', apiLoginId: 'login', at: t0 + 20 },
      { type: 'LegacyCredentialRevoked', v: 1, accountId: 'acct', credentialId: 'l1', apiId: 'tla', at: t0 + 20 },
      { type: 'AdminTokenRevoked', v: 1, adminTokenId: 'adm1', at: t0 + 20 },
      { type: 'TokenRevoked', v: 1, familyId: 'f1', accountId: 'acct', generation: 0, revokedAt: t0 + 20, accessExpiresAt: t0 + 3600 },
    ]).dependents(t0 + 30, original);
    expect(dependents.get(original)).toBeUndefined();
    expect(dependents.get(next)).toEqual({ transactionKeys: 1, apiKeys: 0, refreshTokenFamilies: 1, adminTokens: 1 });
  });

  it('a family stops depending on its keys when its refresh token expires, and until then on every key its history used', () => {
    const rotated: FamilyEvent = { type: 'TokenRotated', v: 1, ...family, familyId: 'f1', generation: 1, hashingKey: next, issuedAt: t0 + 30, refreshExpiresAt: t0 + 30 + 86_400 };
    const use = used([...history, rotated]);
    expect(use.dependents(t0 + 40, original).get(original)?.refreshTokenFamilies).toBe(1);
    expect(use.dependents(t0 + 40, original).get(next)?.refreshTokenFamilies).toBe(2);
    expect(use.dependents(t0 + 10 + 86_400, original).get(next)?.refreshTokenFamilies).toBe(1);
    expect(use.dependents(t0 + 30 + 86_400, original).get(next)?.refreshTokenFamilies ?? 0).toBe(0);
  });
});
