import { beforeEach, describe, expect, it } from 'vitest';
import { streams, type AdminTokenEvent } from '@tessera/events';
import { InMemoryEventStore } from '@tessera/event-store';
import { createSecretHasher, SecretHashingKeyUnavailable, singleKeyHashers, type SecretHashers } from '@tessera/tokens';
import { AdminTokenDirectory } from './admin-token-directory.js';
import { createAdminTokenService, listAdminTokens, type AdminTokenService } from './admin-token-service.js';
import { InvalidAdminTokenInput } from './invalid-admin-token-input.js';

const now = 1_800_000_000;
const hasher = createSecretHasher(Buffer.alloc(32, 3));
let store: InMemoryEventStore;
let service: AdminTokenService;
beforeEach(() => {
  store = new InMemoryEventStore();
  service = createAdminTokenService({ store, hasher, now: () => now, actor: 'cli' });
});

const refusal = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);
const logText = async () => JSON.stringify((await store.readAll()).map(({ event, metadata }) => ({ event, metadata })));
/** The directory as a process has it after following the log, its clock at `at` (epoch seconds). */
async function followed(hashers: SecretHashers = singleKeyHashers(hasher), at: () => number = () => now): Promise<AdminTokenDirectory> {
  const directory = new AdminTokenDirectory(hashers, at);
  for (const { event } of await store.readAll({ types: directory.reader.types })) directory.apply(event as AdminTokenEvent);
  return directory;
}

describe('admin token service', () => {
  it('create appends AdminTokenIssued with the keyed hash and the key that made it on the token\'s own stream, and returns a tsa_ token the log never holds', async () => {
    const created = await service.create({ name: 'ops', scopes: ['audit:read', 'tokens:revoke', 'audit:read'] });
    expect(created.adminToken).toMatch(/^tsa_[A-Za-z0-9_-]{43}$/);
    const recorded = await store.readStream(streams.adminToken(created.id));
    expect(recorded.map((r) => r.event)).toEqual([
      { type: 'AdminTokenIssued', v: 1, adminTokenId: created.id, name: 'ops', scopes: ['audit:read', 'tokens:revoke'], tokenHash: hasher.hash(created.adminToken), hashingKey: hasher.fingerprint, at: now },
    ]);
    expect(recorded[0]?.metadata).toEqual({ actor: 'cli' });
    expect(await logText()).not.toContain(created.adminToken);
  });

  it.each([
    ['an unknown scope', { name: 'ops', scopes: ['admin:everything'] }, 'scope'],
    ['no scope', { name: 'ops', scopes: [] }, 'scope'],
    ['a blank name', { name: ' ', scopes: ['audit:read'] }, 'name'],
    ['a name with an escape sequence', { name: 'ops\u001b[2J', scopes: ['audit:read'] }, 'name'],
  ])('create refuses %s as the caller\'s mistake, appending nothing', async (_what, input, field) => {
    const error = await refusal(service.create(input));
    expect(error).toBeInstanceOf(InvalidAdminTokenInput);
    expect(error).toMatchObject({ field });
    expect(await store.headPosition()).toBeUndefined();
  });

  it('create with expiresInSeconds records expiresAt in AdminTokenIssued, and list shows it; without, neither has one', async () => {
    const expiring = await service.create({ name: 'ops', scopes: ['audit:read'], expiresInSeconds: 900 });
    const lasting = await service.create({ name: 'ci', scopes: ['audit:read'] });
    expect(expiring.expiresAt).toBe(now + 900);
    expect((await store.readStream(streams.adminToken(expiring.id)))[0]?.event).toMatchObject({ type: 'AdminTokenIssued', at: now, expiresAt: now + 900 });
    expect((await store.readStream(streams.adminToken(lasting.id)))[0]?.event).not.toHaveProperty('expiresAt');
    const listed = await listAdminTokens(store);
    expect(listed.map((token) => [token.name, token.expiresAt])).toEqual([
      ['ops', now + 900],
      ['ci', undefined],
    ]);
  });

  it.each([0, -5, 1.5, Number.NaN, 10 * 365 * 86_400 + 1])('create refuses a lifetime of %s seconds as the caller\'s mistake, appending nothing', async (seconds) => {
    const error = await refusal(service.create({ name: 'ops', scopes: ['audit:read'], expiresInSeconds: seconds }));
    expect(error).toBeInstanceOf(InvalidAdminTokenInput);
    expect(error).toMatchObject({ field: 'expires-in' });
    expect(await store.headPosition()).toBeUndefined();
  });

  it('list shows id, name, scopes, created and revoked, and never the token or its hash', async () => {
    const a = await service.create({ name: 'reader', scopes: ['audit:read'] });
    const b = await service.create({ name: 'revoker', scopes: ['tokens:revoke'] });
    await service.revoke(b.id);
    const listed = await listAdminTokens(store);
    expect(listed).toEqual([
      { id: a.id, name: 'reader', scopes: ['audit:read'], createdAt: now, revokedAt: undefined },
      { id: b.id, name: 'revoker', scopes: ['tokens:revoke'], createdAt: now, revokedAt: now },
    ]);
    const text = JSON.stringify(listed);
    expect(text).not.toContain(a.adminToken);
    expect(text).not.toContain(hasher.hash(a.adminToken));
  });

  it('revoke appends AdminTokenRevoked once; a second revoke appends nothing; an unknown id is not found', async () => {
    const created = await service.create({ name: 'ops', scopes: ['audit:read'] });
    expect(await service.revoke(created.id)).toEqual({ id: created.id, revokedAt: now, alreadyRevoked: false });
    const head = await store.headPosition();
    expect(await service.revoke(created.id)).toEqual({ id: created.id, revokedAt: now, alreadyRevoked: true });
    expect(await store.headPosition()).toBe(head);
    expect(await refusal(service.revoke('nobody'))).toMatchObject({ code: 'ERR_ADMIN_TOKEN_NOT_FOUND' });
  });
});

describe('admin token directory', () => {
  it('authenticates an active token to its id, name and scopes; refuses an unknown one, a near miss, and a revoked one', async () => {
    const created = await service.create({ name: 'ops', scopes: ['tokens:revoke'] });
    const other = await service.create({ name: 'other', scopes: ['audit:read'] });
    let directory = await followed();
    expect(directory.authenticate(created.adminToken)).toEqual({ id: created.id, name: 'ops', scopes: new Set(['tokens:revoke']) });
    expect(directory.authenticate('tsa_unknown')).toBeUndefined();
    expect(directory.authenticate(`${created.adminToken.slice(0, -1)}x`)).toBeUndefined();
    await service.revoke(created.id);
    directory = await followed();
    expect(directory.authenticate(created.adminToken)).toBeUndefined();
    expect(directory.authenticate(other.adminToken)?.id).toBe(other.id);
    expect(directory.size).toBe(1);
  });

  it('refuses a token from its expiry on, by the clock it is given; one without an expiry is never refused for its age', async () => {
    const expiring = await service.create({ name: 'ops', scopes: ['audit:read'], expiresInSeconds: 60 });
    const lasting = await service.create({ name: 'ci', scopes: ['audit:read'] });
    let at = now;
    const directory = await followed(singleKeyHashers(hasher), () => at);
    expect(directory.authenticate(expiring.adminToken)?.id).toBe(expiring.id);
    at = now + 59;
    expect(directory.authenticate(expiring.adminToken)?.id).toBe(expiring.id);
    at = now + 60;
    expect(directory.authenticate(expiring.adminToken)).toBeUndefined();
    at = now + 100 * 365 * 86_400;
    expect(directory.authenticate(lasting.adminToken)?.id).toBe(lasting.id);
  });

  it('finds an active token by id (a console session names only the id): not once it is revoked, not from its expiry on', async () => {
    const expiring = await service.create({ name: 'ops', scopes: ['audit:read'], expiresInSeconds: 60 });
    const revoked = await service.create({ name: 'gone', scopes: ['tokens:revoke'] });
    let at = now;
    const directory = await followed(singleKeyHashers(hasher), () => at);
    expect(directory.active(expiring.id)).toEqual({ id: expiring.id, name: 'ops', scopes: new Set(['audit:read']), expiresAt: now + 60 });
    expect(directory.active(revoked.id)?.expiresAt).toBeUndefined();
    expect(directory.active('adm_unknown')).toBeUndefined();
    await service.revoke(revoked.id);
    const [revocation] = await store.readStream(streams.adminToken(revoked.id), { direction: 'backwards', maxCount: 1 });
    // The token's own stream holds admin token events only.
    directory.apply(revocation!.event as AdminTokenEvent);
    expect(directory.active(revoked.id)).toBeUndefined();
    at = now + 60;
    expect(directory.active(expiring.id)).toBeUndefined();
  });
});

describe('admin token directory across a rotation of the secret-hashing key', () => {
  const newHasher = createSecretHasher(Buffer.alloc(32, 4));
  /** A keyring holding both keys: the old one is the log's first, the new one current. */
  const bothKeys: SecretHashers = {
    current: () => newHasher,
    hashUnder: (fingerprint, secret) => (fingerprint === newHasher.fingerprint ? newHasher : hasher).hash(secret),
    decoy: (secret) => newHasher.hash(secret),
  };

  it('a token hashed under the retired key and one under the current key both authenticate, each under its own key', async () => {
    const before = await service.create({ name: 'before', scopes: ['audit:read'] });
    const after = await createAdminTokenService({ store, hasher: newHasher, now: () => now, actor: 'cli' }).create({ name: 'after', scopes: ['audit:read'] });
    const directory = await followed(bothKeys);
    expect(directory.authenticate(before.adminToken)?.id).toBe(before.id);
    expect(directory.authenticate(after.adminToken)?.id).toBe(after.id);
  });

  it('when the key a token was hashed with is not at hand, that token is neither accepted nor refused: the key is unavailable', async () => {
    const before = await service.create({ name: 'before', scopes: ['audit:read'] });
    const after = await createAdminTokenService({ store, hasher: newHasher, now: () => now, actor: 'cli' }).create({ name: 'after', scopes: ['audit:read'] });
    const directory = await followed(singleKeyHashers(newHasher));
    expect(directory.authenticate(after.adminToken)?.id).toBe(after.id);
    expect(() => directory.authenticate(before.adminToken)).toThrow(SecretHashingKeyUnavailable);
  });
});

describe('an operator-made admin token (the bootstrap file)', () => {
  const operatorToken = Buffer.alloc(32, 7).toString('base64url');

  it('register appends its keyed hash only, with the scopes, and the directory then authenticates it', async () => {
    const registered = await service.register({ name: 'bootstrap', scopes: ['accounts:read', 'accounts:write'], adminToken: operatorToken });
    expect(registered.scopes).toEqual(['accounts:read', 'accounts:write']);
    expect(registered.position).toBeDefined();
    expect(await logText()).not.toContain(operatorToken);
    const admin = (await followed()).authenticate(operatorToken);
    expect(admin?.id).toBe(registered.id);
    expect([...admin!.scopes]).toEqual(['accounts:read', 'accounts:write']);
    expect((await listAdminTokens(store))[0]).toMatchObject({ name: 'bootstrap', expiresAt: undefined });
  });

  it('refuses a token too short, too long or with spaces, and an unknown scope, appending nothing and never repeating the token', async () => {
    for (const adminToken of ['x'.repeat(42), 'x'.repeat(513), `${'x'.repeat(30)} ${'x'.repeat(30)}`, `${'x'.repeat(50)}\u00e9`]) {
      const error = await refusal(service.register({ name: 'bootstrap', scopes: ['accounts:read'], adminToken }));
      expect(error).toBeInstanceOf(InvalidAdminTokenInput);
      // Cast: checked to be an InvalidAdminTokenInput just above.
      expect((error as Error).message).not.toContain(adminToken);
    }
    expect(await refusal(service.register({ name: 'bootstrap', scopes: ['accounts:everything'], adminToken: operatorToken }))).toBeInstanceOf(InvalidAdminTokenInput);
    expect(await store.readAll()).toEqual([]);
  });
});

