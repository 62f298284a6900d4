import { beforeEach, describe, expect, it } from 'vitest';
import { streams } from '@tessera/events';
import { DomainError } from '@tessera/domain';
import { InMemoryEventStore } from '@tessera/event-store';
import { createSecretHasher } from '@tessera/tokens';
import { createAccountService, type AccountService } from './account-service.js';
import { InvalidAccountInput } from './invalid-account-input.js';

const now = 1_800_000_000;
const hasher = createSecretHasher(Buffer.alloc(32, 1));
let store: InMemoryEventStore;
let accounts: AccountService;
beforeEach(() => {
  store = new InMemoryEventStore();
  accounts = createAccountService({ store, hasher, now: () => now, actor: 'test' });
});

const refusal = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);
const logText = async () => JSON.stringify((await store.readAll()).map(({ event, metadata }) => ({ event, metadata })));

describe('account service', () => {
  it('create appends the account and its credentials with keyed hashes, and returns the secrets, which the log never holds', async () => {
    const created = await accounts.create({ name: 'Shop', permissions: ['transaction:charge'], legacy: true });
    expect(created.apiLoginId).toMatch(/^tsl_/);
    expect(created.transactionKey).toMatch(/^tsk_/);
    expect(created.legacy?.apiId).toMatch(/^tla_/);
    const recorded = await store.readStream(streams.account(created.accountId));
    expect(recorded.map((r) => r.event)).toEqual([
      expect.objectContaining({ type: 'AccountRegistered', name: 'Shop', permissions: ['transaction:charge'], at: now }),
      expect.objectContaining({ type: 'ApiCredentialIssued', apiLoginId: created.apiLoginId, transactionKeyHash: hasher.hash(created.transactionKey) }),
      expect.objectContaining({ type: 'LegacyCredentialIssued', apiId: created.legacy?.apiId, apiKeyHash: hasher.hash(created.legacy!.apiKey) }),
    ]);
    expect(recorded.every((r) => r.metadata.actor === 'test' && r.metadata.accountId === created.accountId)).toBe(true);
    const log = await logText();
    expect(log).not.toContain(created.transactionKey);
    expect(log).not.toContain(created.legacy!.apiKey);
  });

  it.each([
    ['a blank name', { name: '  ', permissions: [] }, 'name'],
    ['a name over 200 characters', { name: 'x'.repeat(201), permissions: [] }, 'name'],
    ['a permission with a space', { name: 'Shop', permissions: ['has space'] }, 'permission'],
  ])('create refuses %s as the caller\'s mistake, appending nothing', async (_what, input, field) => {
    const error = await refusal(accounts.create({ ...input, legacy: false }));
    expect(error).toBeInstanceOf(InvalidAccountInput);
    expect(error).toMatchObject({ field });
    expect(await store.headPosition()).toBeUndefined();
  });

  it.each([
    ['an escape sequence', 'Shop\u001b[2J\u001b[31m'],
    ['a NUL', 'Shop\u0000'],
    ['a line break', 'Shop\nroot'],
    ['a tab', 'Shop\tX'],
    ['a DEL', 'Shop\u007f'],
    ['an 8-bit CSI (C1)', 'Shop\u009b2J'],
    ['a right-to-left override', 'Shop\u202eexe.txt'],
    ['a line separator', 'Shop\u2028root'],
  ])('create refuses a name with %s as the caller\'s mistake, appending nothing', async (_what, name) => {
    const error = await refusal(accounts.create({ name, permissions: [], legacy: false }));
    expect(error).toBeInstanceOf(InvalidAccountInput);
    expect(error).toMatchObject({ field: 'name', message: expect.stringMatching(/control character/) });
    expect(await store.headPosition()).toBeUndefined();
  });

  it('create takes names in any script, joiners included', async () => {
    for (const name of ['Café Œuvre ☕', 'می\u200cخواهم', 'Zoë & Söhne GmbH']) {
      expect((await accounts.create({ name, permissions: [], legacy: false })).accountId).toMatch(/.+/);
    }
  });

  it('list shows every account with its logins and permissions, and no secret', async () => {
    const a = await accounts.create({ name: 'A', permissions: ['x'], legacy: true });
    const b = await accounts.create({ name: 'B', permissions: [], legacy: false });
    const listed = await accounts.list();
    expect(listed).toEqual([
      { accountId: a.accountId, name: 'A', permissions: ['x'], apiLoginIds: [a.apiLoginId], legacyApiIds: [a.legacy!.apiId], disabled: false },
      { accountId: b.accountId, name: 'B', permissions: [], apiLoginIds: [b.apiLoginId], legacyApiIds: [], disabled: false },
    ]);
    expect(JSON.stringify(listed)).not.toMatch(/tsk_|tlk_/);
  });

  it('rotateKey, by account or by API Login ID, issues a new key for the login and revokes the old credential', async () => {
    const created = await accounts.create({ name: 'Shop', permissions: [], legacy: false });
    const byAccount = await accounts.rotateKey({ accountId: created.accountId });
    expect(byAccount).toMatchObject({ accountId: created.accountId, apiLoginId: created.apiLoginId });
    expect(byAccount.transactionKey).not.toBe(created.transactionKey);
    const byLogin = await accounts.rotateKey({ apiLoginId: created.apiLoginId });
    expect(byLogin.accountId).toBe(created.accountId);
    const events = (await store.readStream(streams.account(created.accountId))).map((r) => r.event);
    expect(events.map((e) => e.type)).toEqual(['AccountRegistered', 'ApiCredentialIssued', 'ApiCredentialIssued', 'ApiCredentialRevoked', 'ApiCredentialIssued', 'ApiCredentialRevoked']);
    expect(events[4]).toMatchObject({ transactionKeyHash: hasher.hash(byLogin.transactionKey) });
    expect(await logText()).not.toContain(byLogin.transactionKey);
  });

  it('rotateKey refuses an unknown login, an unknown account, and a call that names neither', async () => {
    expect(await refusal(accounts.rotateKey({ apiLoginId: 'tsl_nobody' }))).toMatchObject({ code: 'ERR_ACCOUNT_NOT_FOUND', message: 'no account has API Login ID tsl_nobody' });
    expect(await refusal(accounts.rotateKey({ accountId: 'nobody' }))).toMatchObject({ code: 'ERR_ACCOUNT_NOT_FOUND', message: 'no account nobody' });
    expect(await refusal(accounts.rotateKey({}))).toBeInstanceOf(InvalidAccountInput);
    expect(await store.headPosition()).toBeUndefined();
  });

  it('setPermissions replaces the permissions; an unknown account is refused', async () => {
    const created = await accounts.create({ name: 'Shop', permissions: ['a'], legacy: false });
    expect(await accounts.setPermissions(created.accountId, ['b', 'c'])).toEqual({ accountId: created.accountId, events: ['PermissionsChanged'] });
    expect((await accounts.list())[0]?.permissions).toEqual(['b', 'c']);
    const error = await refusal(accounts.setPermissions('nobody', []));
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: 'ERR_ACCOUNT_NOT_FOUND' });
    expect(await refusal(accounts.setPermissions(created.accountId, ['no spaces']))).toBeInstanceOf(InvalidAccountInput);
  });

  it('addLegacyKey returns a new API ID and Key; revokeLegacyKey revokes it, and refuses one that is not active', async () => {
    const created = await accounts.create({ name: 'Shop', permissions: [], legacy: false });
    const added = await accounts.addLegacyKey(created.accountId);
    expect(added.apiKey).toMatch(/^tlk_/);
    expect((await accounts.list())[0]?.legacyApiIds).toEqual([added.apiId]);
    expect(await accounts.revokeLegacyKey(created.accountId, added.apiId)).toEqual({ accountId: created.accountId, events: ['LegacyCredentialRevoked'] });
    expect((await accounts.list())[0]?.legacyApiIds).toEqual([]);
    expect(await refusal(accounts.revokeLegacyKey(created.accountId, added.apiId))).toMatchObject({ code: 'ERR_CREDENTIAL_NOT_FOUND' });
  });

  it('concurrent changes to one account all land: a conflict is read again and decided on the newer state', async () => {
    const created = await accounts.create({ name: 'Shop', permissions: [], legacy: false });
    await Promise.all([accounts.addLegacyKey(created.accountId), accounts.addLegacyKey(created.accountId), accounts.setPermissions(created.accountId, ['p']), accounts.addLegacyKey(created.accountId)]);
    const events = (await store.readStream(streams.account(created.accountId))).map((r) => r.event.type);
    expect(events.filter((type) => type === 'LegacyCredentialIssued')).toHaveLength(3);
    expect(events.filter((type) => type === 'PermissionsChanged')).toHaveLength(1);
  });
});

/** --revoke-tokens on rotate-key, revoke-legacy-key and set-permissions. */
describe('account service with revokeTokens', () => {
  let asked: number;
  beforeEach(() => {
    asked = 0;
    accounts = createAccountService({
      store,
      hasher,
      now: () => now,
      actor: 'cli',
      longestTokenLifetime: async () => {
        asked += 1;
        return 3600;
      },
    });
  });

  it('rotateKey cuts the old credential\'s tokens after the rotation, from the next second until the longest lifetime the log shows', async () => {
    const created = await accounts.create({ name: 'Shop', permissions: [], legacy: false });
    const rotated = await accounts.rotateKey({ accountId: created.accountId }, { revokeTokens: true });
    expect(rotated.tokensRevokedBefore).toBe(now + 1);
    const recorded = await store.readStream(streams.account(created.accountId));
    const last = recorded.slice(-3);
    expect(last.map((r) => r.event.type)).toEqual(['ApiCredentialIssued', 'ApiCredentialRevoked', 'CredentialTokensRevoked']);
    expect(last[2]?.event).toMatchObject({ apiLoginId: created.apiLoginId, notBefore: now + 1, rejectsUntil: now + 3600, reason: 'transaction-key-rotated' });
    expect(last[2]?.metadata).toEqual({ accountId: created.accountId, actor: 'cli' });
    expect(asked).toBe(1);
  });

  it('revokeLegacyKey and setPermissions cut with it; without it they cut nothing and never read the lifetimes', async () => {
    const created = await accounts.create({ name: 'Shop', permissions: [], legacy: true });
    expect(await accounts.setPermissions(created.accountId, ['a'])).toEqual({ accountId: created.accountId, events: ['PermissionsChanged'] });
    expect(asked).toBe(0);
    expect(await accounts.setPermissions(created.accountId, ['b'], { revokeTokens: true })).toEqual({
      accountId: created.accountId,
      events: ['PermissionsChanged', 'AccountTokensRevoked'],
      tokensRevokedBefore: now + 1,
    });
    expect(await accounts.revokeLegacyKey(created.accountId, created.legacy!.apiId, { revokeTokens: true })).toMatchObject({
      events: ['LegacyCredentialRevoked', 'CredentialTokensRevoked'],
      tokensRevokedBefore: now + 1,
    });
  });

  it('a refused change appends no cut', async () => {
    const created = await accounts.create({ name: 'Shop', permissions: [], legacy: false });
    const head = await store.headPosition();
    expect(await refusal(accounts.revokeLegacyKey(created.accountId, 'tla_nope', { revokeTokens: true }))).toMatchObject({ code: 'ERR_CREDENTIAL_NOT_FOUND' });
    expect(await store.headPosition()).toBe(head);
  });
});
