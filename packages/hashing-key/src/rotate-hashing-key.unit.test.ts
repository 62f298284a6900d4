import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { streams } from '@tessera/events';
import { InMemoryEventStore } from '@tessera/event-store';
import { ManualClock, epochSeconds } from '@tessera/timing';
import { createSecretHasher, readHashingKeys, retiredHashingKeyFile } from '@tessera/tokens';
import { checkLogHashingKey } from './check-log-hashing-key.js';
import { retiredKeyUse } from './retired-key-use.js';
import { rotateHashingKey } from './rotate-hashing-key.js';

const t0 = 1_800_000_000;
let dataDir: string;
let root: string;
let clock: ManualClock;
let store: InMemoryEventStore;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-rotate-hashing-'));
  dataDir = join(root, 'data');
  clock = new ManualClock(t0 * 1000);
  store = new InMemoryEventStore({ clock });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const check = () => checkLogHashingKey(store, { writer: 'cli', dataDir, logName: 'the log', now: epochSeconds(clock), mayCreateKey: true });

describe('rotating the secret-hashing key', () => {
  it('records the new key, makes it secret-hashing.key, keeps the old one by its fingerprint, and leaves no other file', async () => {
    const { held } = await check();
    const before = held.inUse!;
    clock.advance(60_000);
    const rotation = await rotateHashingKey(store, { dataDir, current: before, now: epochSeconds(clock) });
    expect(rotation.previousFingerprint).toBe(before.fingerprint);
    expect(rotation.state).toEqual({ status: 'recorded', original: before.fingerprint, current: rotation.fingerprint, retired: [before.fingerprint] });
    expect((await store.readStream(streams.secretHashingKey())).map(({ event }) => event).at(-1)).toEqual({
      type: 'SecretHashingKeyRotated',
      v: 1,
      fingerprint: rotation.fingerprint,
      previousFingerprint: before.fingerprint,
      at: t0 + 60,
    });
    const after = readHashingKeys(dataDir);
    expect(after.inUse?.fingerprint).toBe(rotation.fingerprint);
    expect(after.byFingerprint.get(before.fingerprint)?.key.equals(before.key)).toBe(true);
    expect(readdirSync(join(dataDir, 'keys')).sort()).toEqual(['secret-hashing.key', `secret-hashing.${before.fingerprint}.key`].sort());
    // The folder passes the check with its new key.
    expect((await check()).state.current).toBe(rotation.fingerprint);
  });

  it('a rotation from a key that is no longer current is refused and leaves no new key behind', async () => {
    const { held } = await check();
    await rotateHashingKey(store, { dataDir, current: held.inUse!, now: t0 });
    const files = readdirSync(join(dataDir, 'keys')).sort();
    await expect(rotateHashingKey(store, { dataDir, current: held.inUse!, now: t0 })).rejects.toMatchObject({ code: 'ERR_LOG_HASHING_KEY_MISMATCH' });
    expect(readdirSync(join(dataDir, 'keys')).sort()).toEqual(files);
  });
});

describe('what still depends on each retired key', () => {
  it('counts credentials, live families and admin tokens per retired key at the clock\'s time; a rotated credential and an expired family drop out', async () => {
    const { held } = await check();
    const old = createSecretHasher(held.inUse!.key);
    const at = epochSeconds(clock);
    const h = (secret: string) => old.hash(secret);
    await store.append(streams.account('acct'), [
      { event: { type: 'AccountRegistered', v: 1, accountId: 'acct', name: 'Shop', permissions: [], at } },
      { event: { type: 'ApiCredentialIssued', v: 1, accountId: 'acct', credentialId: 'c1', apiLoginId: 'login', transactionKeyHash: h('tsk'), hashingKey: old.fingerprint, at } },
      { event: { type: 'LegacyCredentialIssued', v: 1, accountId: 'acct', credentialId: 'l1', apiId: 'tla', apiKeyHash: h('tlk'), at } },
    ], { expectedRevision: 'no_stream' });
    const family = { accountId: 'acct', credentialId: 'c1', apiLoginId: 'login', jti: 'j', scope: [], issuedAt: at, accessExpiresAt: at + 3600 };
    await store.append(streams.family('f1'), [{ event: { type: 'TokenIssued', v: 1, ...family, familyId: 'f1', generation: 0, refreshTokenHash: h('tsr'), hashingKey: old.fingerprint, refreshExpiresAt: at + 600 } }], { expectedRevision: 'no_stream' });
    await store.append(streams.adminToken('adm'), [{ event: { type: 'AdminTokenIssued', v: 1, adminTokenId: 'adm', name: 'ops', scopes: ['audit:read'], tokenHash: h('tsa'), hashingKey: old.fingerprint, at } }], { expectedRevision: 'no_stream' });
    const rotation = await rotateHashingKey(store, { dataDir, current: held.inUse!, now: at });
    const use = () => retiredKeyUse(store, { state: rotation.state, dataDir, now: epochSeconds(clock) });
    expect(await use()).toEqual([
      { fingerprint: old.fingerprint, file: retiredHashingKeyFile(dataDir, old.fingerprint), dependents: { transactionKeys: 1, apiKeys: 1, refreshTokenFamilies: 1, adminTokens: 1, ssfReceivers: 0, ssfPushHeaders: 0 } },
    ]);
    const next = createSecretHasher(readHashingKeys(dataDir).inUse!.key);
    await store.append(streams.account('acct'), [
      { event: { type: 'ApiCredentialIssued', v: 1, accountId: 'acct', credentialId: 'c2', apiLoginId: 'login', transactionKeyHash: next.hash('tsk2'), hashingKey: next.fingerprint, at } },
      { event: { type: 'ApiCredentialRevoked', v: 1, accountId: 'acct', credentialId: 'c1', apiLoginId: 'login', at } },
    ], { expectedRevision: 2n });
    clock.advance(600_000);
    expect((await use())[0]?.dependents).toEqual({ transactionKeys: 0, apiKeys: 1, refreshTokenFamilies: 0, adminTokens: 1, ssfReceivers: 0, ssfPushHeaders: 0 });
  });
});
