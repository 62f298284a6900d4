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
  apiCredential: { credentialId: 'c1', apiLoginId: 'login', transactionKeyHash: h('a') },
  legacyCredential: { credentialId: 'l1', apiId: 'apiid', apiKeyHash: h('b') },
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

  it('rotates a transaction key: the new credential is active, the old one is not', () => {
    const rotation = run(registered, { type: 'RotateTransactionKey', apiLoginId: 'login', credentialId: 'c2', transactionKeyHash: h('c'), now: 200 });
    expect(rotation.map((e) => e.type)).toEqual(['ApiCredentialIssued', 'ApiCredentialRevoked']);
    const directory = new CredentialDirectory();
    for (const e of [...registered, ...rotation]) directory.apply(e);
    expect(directory.apiCredential('login')).toEqual({ accountId: 'acc', credentialId: 'c2', secretHash: h('c') });
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
});
