import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SigningKeyEvent } from '@tessera/contracts';
import { EventStoreUnavailable, type AppendResult, type NewEvent } from '@tessera/event-store';
import { ManualClock, ManualScheduler } from '@tessera/timing';
import { KeyFolder } from '@tessera/tokens';
import { SigningKeyUnavailable } from './issuer-errors.js';
import { SigningKeyring, createSigningKey, type KeyPublisher } from './signing-keyring.js';

const now = 1_800_000_000;
let root: string;
let ours: KeyFolder;
let theirs: KeyFolder;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-keyring-'));
  ours = new KeyFolder(join(root, 'ours'));
  theirs = new KeyFolder(join(root, 'theirs'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const retire = (kid: string): SigningKeyEvent => ({ type: 'SigningKeyRetired', v: 1, kid, at: now, retainUntil: now + 3660 });

/** Records what was appended; fails the first `failures` appends as an unreachable store would. */
function publisher(failures = 0): KeyPublisher & { appended: SigningKeyEvent[]; tries(): number } {
  const appended: SigningKeyEvent[] = [];
  let left = failures;
  let tries = 0;
  return {
    appended,
    tries: () => tries,
    append: async (_stream: string, events: readonly NewEvent[]): Promise<AppendResult> => {
      tries += 1;
      if (left > 0) {
        left -= 1;
        throw new EventStoreUnavailable('store down');
      }
      appended.push(...events.map(({ event }) => event as SigningKeyEvent));
      return { nextExpectedRevision: BigInt(appended.length - 1), position: BigInt(appended.length) };
    },
  };
}

describe('SigningKeyring', () => {
  it('signs with the newest unretired key whose private half is in its own folder, never another issuer\'s', async () => {
    const keyring = new SigningKeyring(ours);
    const older = await createSigningKey(ours, now);
    const newer = await createSigningKey(ours, now + 1);
    const foreign = await createSigningKey(theirs, now + 2);
    for (const event of [older, newer, foreign]) keyring.apply(event);
    expect(keyring.current().kid).toBe(newer.kid);
    keyring.apply(retire(newer.kid));
    expect(keyring.current().kid).toBe(older.kid);
  });

  it('once its only key is retired elsewhere, is not ready and refuses with SigningKeyUnavailable', async () => {
    const keyring = new SigningKeyring(ours);
    const only = await createSigningKey(ours, now);
    keyring.apply(only);
    expect(keyring.ready).toBe(true);
    keyring.apply(retire(only.kid));
    expect(keyring.ready).toBe(false);
    expect(() => keyring.current()).toThrow(SigningKeyUnavailable);
    expect(() => keyring.current()).toThrow(expect.objectContaining({ code: 'ERR_SIGNING_KEY_UNAVAILABLE' }));
  });

  it('while keeping its key, publishes a replacement in its own folder as soon as its key is retired elsewhere', async () => {
    const keyring = new SigningKeyring(ours);
    const first = await createSigningKey(ours, now);
    keyring.apply(first);
    const store = publisher();
    const announced: SigningKeyEvent[] = [];
    const stop = keyring.keepKey(store, { now: () => now + 5, onPublished: (event) => announced.push(event) });
    expect(store.appended).toEqual([]);
    keyring.apply(retire(first.kid));
    await expect.poll(() => keyring.ready).toBe(true);
    const replacement = keyring.current().kid;
    expect(replacement).not.toBe(first.kid);
    expect(ours.holds(replacement)).toBe(true);
    expect(store.appended).toEqual([expect.objectContaining({ type: 'SigningKeyPublished', kid: replacement, at: now + 5 })]);
    expect(announced.map((event) => event.kid)).toEqual([replacement]);
    // The log delivers the replacement's event again: nothing changes.
    keyring.apply(store.appended[0]!);
    expect(keyring.current().kid).toBe(replacement);
    expect(store.appended).toHaveLength(1);
    stop();
  });

  it('retries a replacement the store refused, with backoff, until one is published', async () => {
    const keyring = new SigningKeyring(ours);
    const first = await createSigningKey(ours, now);
    keyring.apply(first);
    const store = publisher(2);
    const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
    const logger = {
      warn: (fields: Record<string, unknown>, message: string) => lines.push({ level: 'warn', fields, message }),
      info: (fields: Record<string, unknown>, message: string) => lines.push({ level: 'info', fields, message }),
    };
    const scheduler = new ManualScheduler(new ManualClock(now * 1000));
    const stop = keyring.keepKey(store, { now: () => now, logger, backoff: { initialMs: 5, maxMs: 20 }, clock: scheduler.clock, scheduler });
    keyring.apply(retire(first.kid));
    expect(keyring.ready).toBe(false);
    // Refused once: the next try waits 5 ms of the scheduler's time, not one less.
    await expect.poll(() => store.tries() === 1 && scheduler.pending === 1).toBe(true);
    await scheduler.advance(4);
    expect(scheduler.pending).toBe(1);
    await scheduler.advance(1);
    // Refused again: the third waits 10 ms.
    await expect.poll(() => store.tries() === 2 && scheduler.pending === 1).toBe(true);
    await scheduler.advance(9);
    expect(scheduler.pending).toBe(1);
    expect(keyring.ready).toBe(false);
    await scheduler.advance(1);
    await expect.poll(() => keyring.ready).toBe(true);
    expect(store.tries()).toBe(3);
    expect(store.appended).toHaveLength(1);
    // The first failure and the recovery are logged, not each try.
    expect(lines.map(({ level, fields, message }) => [level, fields.attempts, message])).toEqual([
      ['warn', 1, 'could not publish a new signing key; retrying'],
      ['info', 2, 'published a signing key again'],
    ]);
    expect(lines[0]!.fields.err).toBeInstanceOf(EventStoreUnavailable);
    stop();
  });

  it('publishes nothing once stopped', async () => {
    const keyring = new SigningKeyring(ours);
    const first = await createSigningKey(ours, now);
    keyring.apply(first);
    const store = publisher();
    keyring.keepKey(store, { now: () => now })();
    // A witness still keeping its key, its key retired just after: once it has published a
    // replacement, the stopped keyring has had the same steps' time to do so.
    const witness = new SigningKeyring(theirs);
    const witnessKey = await createSigningKey(theirs, now);
    witness.apply(witnessKey);
    const witnessStore = publisher();
    const stopWitness = witness.keepKey(witnessStore, { now: () => now });
    keyring.apply(retire(first.kid));
    witness.apply(retire(witnessKey.kid));
    await expect.poll(() => witnessStore.appended.length).toBe(1);
    stopWitness();
    expect(store.appended).toEqual([]);
    expect(keyring.ready).toBe(false);
  });
});
