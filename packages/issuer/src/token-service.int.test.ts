import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SigningKeyEvent } from '@tessera/contracts';
import { CredentialDirectory } from '@tessera/domain';
import { SqliteEventStore } from '@tessera/event-store-sqlite';
import { KeyFolder, createSecretHasher, singleKeyHashers } from '@tessera/tokens';
import { SigningKeyUnavailable } from './issuer-errors.js';
import { SigningKeyring, createSigningKey } from './signing-keyring.js';
import { createTokenService, type TokenService } from './token-service.js';

const now = 1_800_000_000;
const metadata = { requestId: 'r', sourceAddress: '127.0.0.1' };
let dir: string;
let store: SqliteEventStore;
let folder: KeyFolder;
let keyring: SigningKeyring;
let tokens: TokenService;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tessera-token-service-'));
  store = new SqliteEventStore({ file: join(dir, 'events.db') });
  folder = new KeyFolder(join(dir, 'keys'));
  keyring = new SigningKeyring(folder);
  const hasher = createSecretHasher(Buffer.alloc(32, 3));
  const directory = new CredentialDirectory();
  directory.apply({ type: 'AccountRegistered', v: 1, accountId: 'acct_1', name: 'Shop', permissions: ['transaction:charge'], at: now });
  directory.apply({ type: 'ApiCredentialIssued', v: 1, accountId: 'acct_1', credentialId: 'cred_1', apiLoginId: 'login_1', transactionKeyHash: hasher.hash('secret'), at: now });
  tokens = createTokenService({
    store,
    directory,
    keyring,
    hashers: singleKeyHashers(hasher),
    issuer: 'urn:tessera:test',
    lifetimes: { accessTokenSeconds: 3600, refreshTokenSeconds: 86_400, legacyTokenSeconds: 1800 },
    now: () => now,
  });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const retire = (kid: string): SigningKeyEvent => ({ type: 'SigningKeyRetired', v: 1, kid, at: now, retainUntil: now + 3660 });

describe('token service without a signing key', () => {
  it('refuses a token request with SigningKeyUnavailable and appends nothing', async () => {
    await expect(tokens.getToken('login_1', 'secret', metadata)).rejects.toBeInstanceOf(SigningKeyUnavailable);
    expect(await store.readAll()).toEqual([]);
  });

  it('leaves a refresh token unused when it cannot sign its successor, so the client can retry it', async () => {
    const first = await createSigningKey(folder, now);
    keyring.apply(first);
    const pair = await tokens.getToken('login_1', 'secret', metadata);
    keyring.apply(retire(first.kid));
    await expect(tokens.refreshToken(pair.refreshToken, metadata)).rejects.toBeInstanceOf(SigningKeyUnavailable);
    keyring.apply(await createSigningKey(folder, now));
    const refreshed = await tokens.refreshToken(pair.refreshToken, metadata);
    expect(refreshed.refreshToken).not.toBe(pair.refreshToken);
  });
});
