import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { streams } from '@tessera/events';
import { InMemoryEventStore } from '@tessera/event-store';
import { createHashingKey, hashingKeyFile, readHashingKeys } from '@tessera/tokens';
import { checkLogHashingKey, type LogHashingKeyCheck } from './check-log-hashing-key.js';
import { LogHashingKeyRefusal } from './log-hashing-key-refusal.js';

const t0 = 1_800_000_000;
let root: string;
let store: InMemoryEventStore;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-log-key-'));
  store = new InMemoryEventStore();
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const folder = (name: string) => join(root, name);
const checking = (dataDir: string, writer: LogHashingKeyCheck['writer'], mayCreateKey = true): LogHashingKeyCheck => ({ writer, dataDir, logName: 'the log', now: t0, mayCreateKey });
const refusalOf = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);
const recorded = async () => (await store.readStream(streams.secretHashingKey())).map(({ event }) => event);
/** A log with events written before fingerprints existed. */
const oldLog = () =>
  store.append(streams.account('acct_old'), [{ event: { type: 'AccountRegistered', v: 1, accountId: 'acct_old', name: 'Old', permissions: [], at: t0 } }], { expectedRevision: 'no_stream' });

describe('the check every writer makes before its first append', () => {
  it('on a new, empty log: makes this folder\'s key and records its fingerprint, once', async () => {
    const checked = await checkLogHashingKey(store, checking(folder('a'), 'cli'));
    const key = readHashingKeys(folder('a')).inUse!;
    expect(checked.state).toEqual({ status: 'recorded', original: key.fingerprint, current: key.fingerprint, retired: [] });
    expect(await recorded()).toEqual([{ type: 'SecretHashingKeyRecorded', v: 1, fingerprint: key.fingerprint, at: t0 }]);
    await checkLogHashingKey(store, checking(folder('a'), 'server'));
    expect(await recorded()).toHaveLength(1);
  });

  it('another data folder on the same log: refused, one line naming both keys and what to do; no key made and nothing written', async () => {
    await checkLogHashingKey(store, checking(folder('a'), 'server'));
    const head = await store.headPosition();
    const missing = await refusalOf(checkLogHashingKey(store, checking(folder('other'), 'cli')));
    expect(missing).toBeInstanceOf(LogHashingKeyRefusal);
    expect(missing).toMatchObject({ code: 'ERR_LOG_HASHING_KEY_MISSING' });
    expect((missing as Error).message).toContain(hashingKeyFile(folder('other')));
    expect((missing as Error).message).toContain(readHashingKeys(folder('a')).inUse!.fingerprint);
    expect((missing as Error).message).not.toContain('\n');
    expect(() => readdirSync(folder('other'))).toThrow(/ENOENT/);
    createHashingKey(folder('b'));
    const mismatch = await refusalOf(checkLogHashingKey(store, checking(folder('b'), 'server')));
    expect(mismatch).toMatchObject({ code: 'ERR_LOG_HASHING_KEY_MISMATCH' });
    expect((mismatch as Error).message).toMatch(/TESSERA_DATA_DIR/);
    expect(await store.headPosition()).toBe(head);
  });

  it('a log written before fingerprints: a command-line tool refuses and says to start the server once; the server records its key; then the tool passes', async () => {
    await oldLog();
    createHashingKey(folder('a'));
    const refused = await refusalOf(checkLogHashingKey(store, checking(folder('a'), 'cli')));
    expect(refused).toMatchObject({ code: 'ERR_LOG_HASHING_KEY_UNRECORDED' });
    expect((refused as Error).message).toMatch(/start its server .* once/);
    expect(await recorded()).toEqual([]);
    await checkLogHashingKey(store, checking(folder('a'), 'server'));
    expect(await recorded()).toEqual([{ type: 'SecretHashingKeyRecorded', v: 1, fingerprint: readHashingKeys(folder('a')).inUse!.fingerprint, at: t0 }]);
    await expect(checkLogHashingKey(store, checking(folder('a'), 'cli'))).resolves.toBeDefined();
  });

  it('a log written before fingerprints and a server with no key: refused, and no key is made for it', async () => {
    await oldLog();
    const refused = await refusalOf(checkLogHashingKey(store, checking(folder('fresh'), 'server')));
    expect(refused).toMatchObject({ code: 'ERR_LOG_HASHING_KEY_MISSING' });
    expect(() => readdirSync(folder('fresh'))).toThrow(/ENOENT/);
  });

  it('a command that may not make a key (it hashes nothing) makes none, even on a new log', async () => {
    const refused = await refusalOf(checkLogHashingKey(store, checking(folder('a'), 'cli', false)));
    expect(refused).toMatchObject({ code: 'ERR_LOG_HASHING_KEY_MISSING' });
    expect(() => readdirSync(folder('a'))).toThrow(/ENOENT/);
    expect(await store.headPosition()).toBeUndefined();
  });

  it('two writers of different folders on one new log: the first records its key, the second is refused', async () => {
    const [first, second] = await Promise.allSettled([checkLogHashingKey(store, checking(folder('a'), 'server')), checkLogHashingKey(store, checking(folder('b'), 'server'))]);
    expect([first.status, second.status].sort()).toEqual(['fulfilled', 'rejected']);
    expect(await recorded()).toHaveLength(1);
  });
});
