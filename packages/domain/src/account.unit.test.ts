import { describe, expect, it } from 'vitest';
import type { AccountEvent } from '@tessera/contracts';
import { decideAccount, evolveAccount, initialAccountState, type AccountCommand } from './account.js';
import { CredentialDirectory } from './credential-directory.js';
import { DomainError } from './errors.js';

const h = (c: string) => c.repeat(43);
const register: AccountCommand = {
  type: 'RegisterAccount',
  accountId: 'acc',
  name: 'Shop',
  permissions: ['transaction:charge', 'transaction:charge'],
  apiCredential: { credentialId: 'c1', apiLoginId: 'login', transactionKeyHash: h('a'), hashingKey: 'K'.repeat(22) },
  legacyCredential: { credentialId: 'l1', apiId: 'apiid', apiKeyHash: h('b'), hashingKey: 'K'.repeat(22) },
  now: 100,
};

function run(history: AccountEvent[], command: AccountCommand) {
  return decideAccount(command, history.reduce(evolveAccount, initialAccountState()));
}

describe('account decider', () => {
  const registered = run([], register);

  it('registers with a v5 credential, an optional legacy one, and de-duplicated permissions', () => {
    expect(registered.map((e) => e.type)).toEqual(['AccountRegistered', 'ApiCredentialIssued', 'LegacyCredentialIssued']);
    expect(registered[0]).toMatchObject({ permissions: ['transaction:charge'] });
  });

  it('refuses to register twice', () => {
    expect(() => run(registered, register)).toThrow(DomainError);
  });

  it('rotates a transaction key: the new credential is active, the old one is not, and names the key its hash was made with', () => {
    const rotation = run(registered, { type: 'RotateTransactionKey', apiLoginId: 'login', credentialId: 'c2', transactionKeyHash: h('c'), hashingKey: 'L'.repeat(22), now: 200 });
    expect(rotation.map((e) => e.type)).toEqual(['ApiCredentialIssued', 'ApiCredentialRevoked']);
    const directory = new CredentialDirectory();
    for (const e of [...registered, ...rotation]) directory.apply(e);
    expect(directory.apiCredential('login')).toEqual({ accountId: 'acc', credentialId: 'c2', secretHash: h('c'), hashingKey: 'L'.repeat(22) });
    expect(directory.isApiCredentialActive('login', 'c1')).toBe(false);
  });

  it('refuses commands on an unknown account or credential', () => {
    expect(() => run([], { type: 'SetPermissions', permissions: [], now: 1 })).toThrow(/account not found/);
    expect(() => run(registered, { type: 'RevokeLegacyCredential', apiId: 'nope', now: 1 })).toThrow(/no active legacy credential/);
  });

  it('changes permissions and legacy credentials, and the directory follows', () => {
    const changes = [
      ...run(registered, { type: 'SetPermissions', permissions: ['a', 'b'], now: 300 }),
      ...run(registered, { type: 'RevokeLegacyCredential', apiId: 'apiid', now: 301 }),
    ];
    const directory = new CredentialDirectory();
    for (const e of [...registered, ...changes]) directory.apply(e);
    expect(directory.account('acc')?.permissions).toEqual(['a', 'b']);
    expect(directory.legacyCredential('apiid')).toBeUndefined();
  });

  it('client keys: a URL replaces keys on the log and a set of keys replaces the URL; a v1 event from before URLs folds as keys', () => {
    const jwk = { kty: 'OKP' as const, kid: 'k1', crv: 'Ed25519', x: 'AAAA' };
    const byUrl = run(registered, { type: 'SetClientKeys', jwks: { keys: [jwk] }, jwksUri: 'https://keys.example.test/jwks.json', now: 310 });
    // The URL alone is recorded: keys beside it would be a second source of the same truth.
    expect(byUrl).toEqual([{ type: 'ClientKeysSet', v: 1, accountId: 'acc', jwks: { keys: [] }, jwksUri: 'https://keys.example.test/jwks.json', at: 310 }]);
    // As written to disk before --jwks-url existed: no jwksUri member at all.
    const fromFile: AccountEvent = { type: 'ClientKeysSet', v: 1, accountId: 'acc', jwks: { keys: [jwk] }, at: 300 };
    const directory = new CredentialDirectory();
    for (const e of [...registered, fromFile]) directory.apply(e);
    expect(directory.account('acc')).toMatchObject({ clientKeys: [jwk], clientKeysUri: undefined });
    for (const e of byUrl) directory.apply(e);
    expect(directory.account('acc')).toMatchObject({ clientKeys: [], clientKeysUri: 'https://keys.example.test/jwks.json' });
    directory.apply({ ...fromFile, at: 320 });
    expect(directory.account('acc')).toMatchObject({ clientKeys: [jwk], clientKeysUri: undefined });
  });
});

/** Cuts by account and by credential (docs/decisions/0011). */
describe('token cuts', () => {
  const registered = run([], register);
  const cut = { longestTokenLifetime: 3600 };

  it('rotate-key with revokeTokens cuts the old credential after the rotation: tokens of that API Login ID issued up to this second', () => {
    const events = run(registered, { type: 'RotateTransactionKey', apiLoginId: 'login', credentialId: 'c2', transactionKeyHash: h('c'), hashingKey: 'L'.repeat(22), now: 200, revokeTokens: cut });
    expect(events.map((e) => e.type)).toEqual(['ApiCredentialIssued', 'ApiCredentialRevoked', 'CredentialTokensRevoked']);
    expect(events[2]).toEqual({
      type: 'CredentialTokensRevoked',
      v: 1,
      accountId: 'acc',
      credentialId: 'c1',
      apiLoginId: 'login',
      notBefore: 201,
      rejectsUntil: 200 + 3600,
      reason: 'transaction-key-rotated',
      at: 200,
    });
  });

  it('revoke-legacy-key with revokeTokens cuts that API ID', () => {
    const events = run(registered, { type: 'RevokeLegacyCredential', apiId: 'apiid', now: 300, revokeTokens: { longestTokenLifetime: 1800 } });
    expect(events.map((e) => e.type)).toEqual(['LegacyCredentialRevoked', 'CredentialTokensRevoked']);
    expect(events[1]).toMatchObject({ credentialId: 'l1', apiId: 'apiid', notBefore: 301, rejectsUntil: 2100, reason: 'legacy-key-revoked' });
    expect(events[1]).not.toHaveProperty('apiLoginId');
  });

  it('set-permissions with revokeTokens cuts the whole account after the change; without it, nothing is cut', () => {
    const events = run(registered, { type: 'SetPermissions', permissions: ['a'], now: 400, revokeTokens: cut });
    expect(events.map((e) => e.type)).toEqual(['PermissionsChanged', 'AccountTokensRevoked']);
    expect(events[1]).toEqual({ type: 'AccountTokensRevoked', v: 1, accountId: 'acc', notBefore: 401, rejectsUntil: 4000, reason: 'permissions-changed', at: 400 });
    expect(run(registered, { type: 'SetPermissions', permissions: ['a'], now: 400 }).map((e) => e.type)).toEqual(['PermissionsChanged']);
  });

  it('an operator cut of an account is refused for an unknown account, and leaves the account as it was', () => {
    expect(() => run([], { type: 'RevokeAccountTokens', now: 1, revokeTokens: cut })).toThrow(expect.objectContaining({ code: 'ERR_ACCOUNT_NOT_FOUND' }));
    const events = run(registered, { type: 'RevokeAccountTokens', now: 500, revokeTokens: cut });
    expect(events).toMatchObject([{ type: 'AccountTokensRevoked', notBefore: 501, rejectsUntil: 4100, reason: 'operator' }]);
    const before = registered.reduce(evolveAccount, initialAccountState());
    expect(events.reduce(evolveAccount, before)).toEqual(before);
  });

  it('a log with no tokens gives a cut that rejects nothing beyond its own second', () => {
    expect(run(registered, { type: 'RevokeAccountTokens', now: 500, revokeTokens: { longestTokenLifetime: 0 } })).toMatchObject([{ notBefore: 501, rejectsUntil: 500 }]);
  });

  it('the directory dates new tokens at the latest cut of the account or of the client id, whichever is later, in any order it learns them', () => {
    const directory = new CredentialDirectory();
    for (const e of registered) directory.apply(e);
    expect(directory.tokensValidFrom('acc', 'login')).toBe(0);
    const accountCut = run(registered, { type: 'RevokeAccountTokens', now: 500, revokeTokens: cut });
    const keyCut = run(registered, { type: 'RotateTransactionKey', apiLoginId: 'login', credentialId: 'c2', transactionKeyHash: h('c'), hashingKey: 'L'.repeat(22), now: 700, revokeTokens: cut });
    for (const e of [...keyCut, ...accountCut, ...accountCut]) directory.apply(e);
    expect(directory.tokensValidFrom('acc', 'login')).toBe(701);
    expect(directory.tokensValidFrom('acc', 'apiid')).toBe(501);
    expect(directory.tokensValidFrom('other', 'other-login')).toBe(0);
  });
});
