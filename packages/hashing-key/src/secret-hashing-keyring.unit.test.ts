import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InMemoryEventStore } from '@tessera/event-store';
import { ManualClock } from '@tessera/timing';
import { createHashingKey, createSecretHasher, keepHashingKey, retiredHashingKeyFile, newHashingKey, readHashingKeys, secretHashingKeyFingerprint, SecretHashingKeyUnavailable } from '@tessera/tokens';
import { checkLogHashingKey } from './check-log-hashing-key.js';
import { SecretHashingKeyring } from './secret-hashing-keyring.js';

const t0 = 1_800_000_000;
let root: string;
let clock: ManualClock;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-keyring-'));
  clock = new ManualClock(t0 * 1000);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A server's data folder whose key the log recorded, and its keyring after the check. */
async function checkedServer(dataDir: string) {
  const store = new InMemoryEventStore();
  const { state } = await checkLogHashingKey(store, { writer: 'server', dataDir, logName: 'the log', now: t0, mayCreateKey: true });
  const keyring = new SecretHashingKeyring({ dataDir }, { clock });
  keyring.seed(state);
  return { keyring, state, original: readHashingKeys(dataDir).inUse! };
}

describe('a server\'s secret-hashing keyring', () => {
  it('is not ready, and hashes nothing, until its key was checked against the log', () => {
    const dataDir = join(root, 'data');
    createHashingKey(dataDir);
    const keyring = new SecretHashingKeyring({ dataDir }, { clock });
    expect(keyring.missing()).toMatch(/not checked/);
    expect(() => keyring.current()).toThrow(SecretHashingKeyUnavailable);
  });

  it('a rotation to a key this folder lacks: no new hash with the retired key, a cause naming the file, old hashes still checked; the key found on a later look', async () => {
    const dataDir = join(root, 'data');
    const { keyring, original } = await checkedServer(dataDir);
    const oldHash = createSecretHasher(original.key).hash('tsk_old');
    expect(keyring.current().fingerprint).toBe(original.fingerprint);
    const next = newHashingKey();
    const nextFingerprint = secretHashingKeyFingerprint(next);
    keyring.apply({ type: 'SecretHashingKeyRotated', v: 1, fingerprint: nextFingerprint, previousFingerprint: original.fingerprint, at: t0 + 60 });
    expect(() => keyring.current()).toThrow(SecretHashingKeyUnavailable);
    expect(keyring.missing()).toContain(retiredHashingKeyFile(dataDir, nextFingerprint));
    expect(keyring.missing()).toContain(nextFingerprint);
    expect(keyring.hashUnder(undefined, 'tsk_old')).toBe(oldHash);
    expect(keyring.hashUnder(original.fingerprint, 'tsk_old')).toBe(oldHash);
    keepHashingKey(dataDir, next);
    expect(keyring.reread()).toBe(true);
    expect(keyring.missing()).toBeUndefined();
    expect(keyring.current().fingerprint).toBe(nextFingerprint);
    expect(keyring.hashUnder(undefined, 'tsk_old')).toBe(oldHash);
  });

  it('a hash naming a key not on disk is unavailable (503), and the folder is read again for it at most once a second', async () => {
    const dataDir = join(root, 'data');
    const { keyring } = await checkedServer(dataDir);
    const absent = newHashingKey();
    const fingerprint = secretHashingKeyFingerprint(absent);
    expect(() => keyring.hashUnder(fingerprint, 's')).toThrow(SecretHashingKeyUnavailable);
    keepHashingKey(dataDir, absent);
    clock.advance(500);
    expect(() => keyring.hashUnder(fingerprint, 's')).toThrow(SecretHashingKeyUnavailable);
    clock.advance(500);
    expect(keyring.hashUnder(fingerprint, 's')).toBe(createSecretHasher(absent).hash('s'));
  });

  it('the check\'s record never replaces a later one the log follower applied first', async () => {
    const dataDir = join(root, 'data');
    const { keyring, state, original } = await checkedServer(dataDir);
    const next = newHashingKey();
    keepHashingKey(dataDir, next);
    keyring.apply({ type: 'SecretHashingKeyRotated', v: 1, fingerprint: secretHashingKeyFingerprint(next), previousFingerprint: original.fingerprint, at: t0 + 60 });
    keyring.seed(state);
    expect(keyring.currentFingerprint).toBe(secretHashingKeyFingerprint(next));
  });
});
