import { describe, expect, it } from 'vitest';
import type { AccountEvent, AdminTokenEvent, FamilyEvent, SsfReceiverEvent, SsfStreamEvent } from '@tessera/events';
import { HashingKeyUse, noDependents } from './hashing-key-use.js';

const [original, next] = ['O'.repeat(22), 'N'.repeat(22)];
const h = 'h'.repeat(43);
const t0 = 1_800_000_000;
const family = { accountId: 'acct', credentialId: 'c1', apiLoginId: 'login', refreshTokenHash: h, jti: 'j', scope: [], accessExpiresAt: t0 + 3600 };

function used(events: (AccountEvent | FamilyEvent | AdminTokenEvent | SsfReceiverEvent | SsfStreamEvent)[]) {
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
    expect(dependents.get(original)).toEqual({ ...noDependents, transactionKeys: 1, apiKeys: 1, refreshTokenFamilies: 1, adminTokens: 1 });
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
    expect(dependents.get(next)).toEqual({ ...noDependents, transactionKeys: 1, refreshTokenFamilies: 1, adminTokens: 1 });
  });

  it('a family stops depending on its keys when its refresh token expires, and until then on every key its history used', () => {
    const rotated: FamilyEvent = { type: 'TokenRotated', v: 1, ...family, familyId: 'f1', generation: 1, hashingKey: next, issuedAt: t0 + 30, refreshExpiresAt: t0 + 30 + 86_400 };
    const use = used([...history, rotated]);
    expect(use.dependents(t0 + 40, original).get(original)?.refreshTokenFamilies).toBe(1);
    expect(use.dependents(t0 + 40, original).get(next)?.refreshTokenFamilies).toBe(2);
    expect(use.dependents(t0 + 10 + 86_400, original).get(next)?.refreshTokenFamilies).toBe(1);
    expect(use.dependents(t0 + 30 + 86_400, original).get(next)?.refreshTokenFamilies ?? 0).toBe(0);
  });

  it('a Shared Signals receiver depends on its token hash\'s key until revoked; a push stream on the key its header is sealed under until deleted or resealed', () => {
    const push = (sealedUnder: string | undefined) => ({
      delivery: { method: 'push' as const, endpointUrl: 'https://receiver.example/ssf', ...(sealedUnder === undefined ? {} : { sealedAuthorization: `v1.${sealedUnder}.iv.ct.tag` }) },
      eventsRequested: [],
      eventsDelivered: [],
    });
    const signals: (SsfReceiverEvent | SsfStreamEvent)[] = [
      { type: 'SsfReceiverRegistered', v: 1, receiverId: 'r1', name: 'a', tokenHash: h, at: t0 },
      { type: 'SsfReceiverRegistered', v: 1, receiverId: 'r2', name: 'b', tokenHash: h, hashingKey: next, at: t0 },
      { type: 'SsfStreamCreated', v: 1, streamId: 's1', receiverId: 'r1', configuration: push(original), at: t0 },
      { type: 'SsfStreamCreated', v: 1, streamId: 's2', receiverId: 'r1', configuration: push(original), at: t0 },
      { type: 'SsfStreamCreated', v: 1, streamId: 's3', receiverId: 'r1', configuration: push(undefined), at: t0 },
    ];
    expect(used(signals).dependents(t0, original).get(original)).toEqual({ ...noDependents, ssfReceivers: 1, ssfPushHeaders: 2 });
    const later = used([
      ...signals,
      { type: 'SsfReceiverRevoked', v: 1, receiverId: 'r1', at: t0 + 1 },
      { type: 'SsfStreamUpdated', v: 1, streamId: 's1', receiverId: 'r1', configuration: push(next), at: t0 + 1 },
      { type: 'SsfStreamDeleted', v: 1, streamId: 's2', receiverId: 'r1', at: t0 + 1 },
    ]).dependents(t0 + 1, original);
    expect(later.get(original)).toBeUndefined();
    expect(later.get(next)).toEqual({ ...noDependents, ssfReceivers: 1, ssfPushHeaders: 1 });
  });
});
