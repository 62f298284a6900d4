import { beforeEach, describe, expect, it } from 'vitest';
import { ssfReceiverEventTypes, ssfStreams, type SsfReceiverEvent } from '@tessera/events';
import { InMemoryEventStore } from '@tessera/event-store';
import { createSecretHasher, SecretHashingKeyUnavailable, singleKeyHashers, type SecretHashers } from '@tessera/tokens';
import { ReceiverDirectory } from './receiver-directory.js';
import { createReceiverService, listReceivers, type ReceiverService } from './receiver-service.js';
import { createHeaderSeal } from './sealed-header.js';

const now = 1_800_000_000;
const hasher = createSecretHasher(Buffer.alloc(32, 5));
let store: InMemoryEventStore;
let service: ReceiverService;
beforeEach(() => {
  store = new InMemoryEventStore();
  service = createReceiverService({ store, hasher, now: () => now, actor: 'cli' });
});

const refusal = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);
async function followed(): Promise<ReceiverDirectory> {
  const directory = new ReceiverDirectory(singleKeyHashers(hasher));
  for (const { event } of await store.readAll({ types: ssfReceiverEventTypes })) directory.apply(event as SsfReceiverEvent);
  return directory;
}

describe('receiver tokens', () => {
  it("create appends SsfReceiverRegistered with the token's keyed hash on the receiver's own stream, and returns a tss_ token the log never holds", async () => {
    const created = await service.create({ name: 'Partner API' });
    expect(created.token).toMatch(/^tss_[A-Za-z0-9_-]{43}$/);
    const recorded = await store.readStream(ssfStreams.receiver(created.receiverId));
    expect(recorded.map((r) => r.event)).toEqual([{ type: 'SsfReceiverRegistered', v: 1, receiverId: created.receiverId, name: 'Partner API', tokenHash: hasher.hash(created.token), hashingKey: hasher.fingerprint, at: now }]);
    expect(JSON.stringify((await store.readAll()).map((r) => r.event))).not.toContain(created.token);
  });

  it.each([' ', '', 'x'.repeat(201), 'evil\u001b[2J'])('refuses the name %j as the caller\'s mistake, appending nothing', async (name) => {
    expect(await refusal(service.create({ name }))).toMatchObject({ code: 'ERR_INVALID_SSF_RECEIVER_INPUT' });
    expect(await store.headPosition()).toBeUndefined();
  });

  it('authenticates an active token in constant time by its keyed hash; refuses a near miss, an unknown and a revoked one', async () => {
    const created = await service.create({ name: 'a' });
    const other = await service.create({ name: 'b' });
    let directory = await followed();
    expect(directory.authenticate(created.token)).toEqual({ receiverId: created.receiverId, name: 'a' });
    expect(directory.authenticate(`${created.token.slice(0, -1)}x`)).toBeUndefined();
    expect(directory.authenticate('tss_unknown')).toBeUndefined();
    expect(await service.revoke(created.receiverId)).toEqual({ receiverId: created.receiverId, revokedAt: now, alreadyRevoked: false });
    expect(await service.revoke(created.receiverId)).toMatchObject({ alreadyRevoked: true });
    directory = await followed();
    expect(directory.authenticate(created.token)).toBeUndefined();
    expect(directory.authenticate(other.token)?.receiverId).toBe(other.receiverId);
    expect(await refusal(service.revoke('nobody'))).toMatchObject({ code: 'ERR_SSF_RECEIVER_NOT_FOUND' });
  });

  it('lists receivers with their times, never a token or a hash', async () => {
    const created = await service.create({ name: 'a' });
    await service.revoke(created.receiverId);
    const listed = await listReceivers(store);
    expect(listed).toEqual([{ receiverId: created.receiverId, name: 'a', createdAt: now, revokedAt: now }]);
    expect(JSON.stringify(listed)).not.toContain(hasher.hash(created.token));
  });
});

describe('the sealed authorization header', () => {
  it('opens for its stream with its key only', () => {
    const seal = createHeaderSeal(singleKeyHashers(createSecretHasher(Buffer.alloc(32, 1))));
    const sealed = seal.seal('stream-1', 'Bearer secret');
    expect(sealed).not.toContain('secret');
    expect(seal.open('stream-1', sealed)).toBe('Bearer secret');
    expect(seal.open('stream-2', sealed)).toBeUndefined();
    // Another key of the same fingerprint cannot exist; a forged fingerprint's text does not open.
    expect(seal.open('stream-1', sealed.replace(/^v1\.[^.]+\./, `v1.${createSecretHasher(Buffer.alloc(32, 1)).fingerprint}.`))).toBe('Bearer secret');
    // A tag changed in its first character (six bits of its first byte; the last characters carry
    // fewer bits, so replacing them can leave the tag as it was).
    const tagAt = sealed.lastIndexOf('.') + 1;
    const tampered = `${sealed.slice(0, tagAt)}${sealed[tagAt] === 'A' ? 'B' : 'A'}${sealed.slice(tagAt + 1)}`;
    expect(tampered).not.toBe(sealed);
    expect(seal.open('stream-1', tampered)).toBeUndefined();
    expect(() => createHeaderSeal(singleKeyHashers(createSecretHasher(Buffer.alloc(32, 2)))).open('stream-1', sealed)).toThrow(SecretHashingKeyUnavailable);
    expect(seal.seal('stream-1', 'Bearer secret')).not.toBe(sealed);
  });
});

describe('across a rotation of the secret-hashing key', () => {
  const newHasher = createSecretHasher(Buffer.alloc(32, 6));
  /** Both keys at hand, the new one current: a host the rotated key was copied to. */
  const bothKeys: SecretHashers = {
    current: () => newHasher,
    hashUnder: (fingerprint, secret) => (fingerprint === newHasher.fingerprint ? newHasher : hasher).hash(secret),
    decoy: (secret) => newHasher.hash(secret),
  };

  it('a receiver made before and one made after both authenticate, each hash naming its key; without the old key the old one is unavailable, not refused', async () => {
    const before = await service.create({ name: 'before' });
    const after = await createReceiverService({ store, hasher: newHasher, now: () => now, actor: 'cli' }).create({ name: 'after' });
    const events = (await store.readAll({ types: ssfReceiverEventTypes })).map((r) => r.event);
    expect(events.map((event) => (event as { hashingKey?: string }).hashingKey)).toEqual([hasher.fingerprint, newHasher.fingerprint]);
    const directory = new ReceiverDirectory(bothKeys);
    for (const event of events) directory.apply(event as SsfReceiverEvent);
    expect(directory.authenticate(before.token)?.receiverId).toBe(before.receiverId);
    expect(directory.authenticate(after.token)?.receiverId).toBe(after.receiverId);
    const newOnly = new ReceiverDirectory(singleKeyHashers(newHasher));
    for (const event of events) newOnly.apply(event as SsfReceiverEvent);
    expect(newOnly.authenticate(after.token)?.receiverId).toBe(after.receiverId);
    expect(() => newOnly.authenticate(before.token)).toThrow(SecretHashingKeyUnavailable);
  });

  it('a header sealed before the rotation still opens with the retired key kept; new headers are sealed under the new key', () => {
    const sealedBefore = createHeaderSeal(singleKeyHashers(hasher)).seal('stream-1', 'Bearer old');
    const seal = createHeaderSeal(bothKeys);
    expect(seal.open('stream-1', sealedBefore)).toBe('Bearer old');
    const sealedAfter = seal.seal('stream-1', 'Bearer new');
    expect(sealedAfter.split('.')[1]).toBe(newHasher.fingerprint);
    expect(createHeaderSeal(singleKeyHashers(newHasher)).open('stream-1', sealedAfter)).toBe('Bearer new');
  });
});
