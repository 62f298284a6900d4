import { describe, expect, it } from 'vitest';
import type { AccountEvent } from '@tessera/contracts';
import { decideAccount, evolveAccount, initialAccountState, type AccountCommand } from './account.js';
import { CredentialDirectory } from './credential-directory.js';

const h = (c: string) => c.repeat(43);
const register: AccountCommand = {
  type: 'RegisterAccount',
  accountId: 'acc',
  name: 'Shop',
  permissions: ['transaction:charge'],
  apiCredential: { credentialId: 'c1', apiLoginId: 'login', transactionKeyHash: h('a'), hashingKey: 'K'.repeat(22) },
  legacyCredential: { credentialId: 'l1', apiId: 'apiid', apiKeyHash: h('b'), hashingKey: 'K'.repeat(22) },
  now: 100,
};
const cut = { longestTokenLifetime: 3600 };
const disable: AccountCommand = { type: 'DisableAccount', reason: 'fraud', actor: 'admin:t1', now: 500, revokeTokens: cut };
const enable: AccountCommand = { type: 'EnableAccount', actor: 'cli', now: 600 };

const stateOf = (history: readonly AccountEvent[]) => history.reduce(evolveAccount, initialAccountState());
const run = (history: readonly AccountEvent[], command: AccountCommand) => decideAccount(command, stateOf(history));
const directoryOf = (history: readonly AccountEvent[]) => {
  const directory = new CredentialDirectory();
  for (const event of history) directory.apply(event);
  return directory;
};

describe('disabling and enabling an account', () => {
  const registered = run([], register);
  const disabled = [...registered, ...run(registered, disable)];

  it('disabling records who and why, then cuts every access token issued up to now', () => {
    expect(run(registered, disable)).toEqual([
      { type: 'AccountDisabled', v: 1, accountId: 'acc', reason: 'fraud', actor: 'admin:t1', at: 500 },
      { type: 'AccountTokensRevoked', v: 1, accountId: 'acc', notBefore: 501, rejectsUntil: 4100, reason: 'account-disabled', at: 500 },
    ]);
    expect(stateOf(disabled)).toMatchObject({ status: 'registered', disabled: true });
  });

  it('a disable without a reason carries none', () => {
    const [event] = run(registered, { type: 'DisableAccount', actor: 'cli', now: 500, revokeTokens: cut });
    expect(event).toEqual({ type: 'AccountDisabled', v: 1, accountId: 'acc', actor: 'cli', at: 500 });
  });

  it('disabling a disabled account and enabling an enabled one append nothing', () => {
    expect(run(disabled, disable)).toEqual([]);
    expect(run(registered, enable)).toEqual([]);
  });

  it('enabling a disabled account records who, and it is enabled again', () => {
    const enabled = run(disabled, enable);
    expect(enabled).toEqual([{ type: 'AccountEnabled', v: 1, accountId: 'acc', actor: 'cli', at: 600 }]);
    expect(stateOf([...disabled, ...enabled])).toMatchObject({ disabled: false });
  });

  it('refuses both on an unknown account', () => {
    expect(() => run([], disable)).toThrow(expect.objectContaining({ code: 'ERR_ACCOUNT_NOT_FOUND' }));
    expect(() => run([], enable)).toThrow(expect.objectContaining({ code: 'ERR_ACCOUNT_NOT_FOUND' }));
  });

  it("the directory knows none of a disabled account's credentials, v5 or v1, and refreshes none of its families", () => {
    const before = directoryOf(registered);
    expect(before.apiCredential('login')?.credentialId).toBe('c1');
    const directory = directoryOf(disabled);
    expect(directory.apiCredential('login')).toBeUndefined();
    expect(directory.legacyCredential('apiid')).toBeUndefined();
    expect(directory.isApiCredentialActive('login', 'c1')).toBe(false);
    // New tokens are dated at the cut or after it, so enabling never gives a token the cut refuses.
    expect(directory.tokensValidFrom('acc', 'login')).toBe(501);
    expect(directory.account('acc')?.disabled).toBe(true);
  });

  it('the directory knows them again once the account is enabled', () => {
    const directory = directoryOf([...disabled, ...run(disabled, enable)]);
    expect(directory.apiCredential('login')?.credentialId).toBe('c1');
    expect(directory.legacyCredential('apiid')?.credentialId).toBe('l1');
    expect(directory.isApiCredentialActive('login', 'c1')).toBe(true);
  });
});

describe('families and the disables of their account', () => {
  const registered = run([], register);
  const disabledAt500 = [...registered, ...run(registered, disable)];

  it('a family last issued by the latest disable is refused for good; one issued after it is not; an account never disabled refuses none', () => {
    const enabled = [...disabledAt500, ...run(disabledAt500, enable)];
    const directory = directoryOf(enabled);
    expect(directory.survivedDisables('acc', 500)).toBe(false);
    expect(directory.survivedDisables('acc', 501)).toBe(true);
    expect(directoryOf(registered).survivedDisables('acc', 0)).toBe(true);
    // An older disable heard after a newer one (another region's topic) does not move the line back.
    directory.apply({ type: 'AccountDisabled', v: 1, accountId: 'acc', actor: 'cli', at: 300 });
    expect(directory.survivedDisables('acc', 400)).toBe(false);
    expect(directory.survivedDisables('acc', 500)).toBe(false);
  });
});
