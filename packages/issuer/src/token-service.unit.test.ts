import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { audiences, streams, type AccountEvent, type FamilyEvent, type SigningKeyEvent } from '@tessera/events';
import { CredentialDirectory } from '@tessera/domain';
import { EventStoreUnavailable, InMemoryEventStore, type AppendResult, type ExpectedRevision, type NewEvent } from '@tessera/event-store';
import {
  KeyFolder,
  PublicKeySet,
  SecretHashingKeyUnavailable,
  createSecretHasher,
  familyOfRefreshToken,
  singleKeyHashers,
  verifyAccessToken,
  type SecretHasher,
  type SecretHashers,
} from '@tessera/tokens';
import { IssuerRefusal } from './issuer-errors.js';
import { SigningKeyring, createSigningKey } from './signing-keyring.js';
import { createTokenService, type TokenService, type TokenServiceDeps } from './token-service.js';

/** The token service on the in-memory store: every rule of docs/interface.md (token states and operations) without a process or a disk log. */
const t0 = 1_800_000_000;
const issuer = 'urn:tessera:test';
const metadata = { requestId: 'req-1', sourceAddress: '127.0.0.1' };
const hasher = createSecretHasher(Buffer.alloc(32, 7));
const lifetimes = { accessTokenSeconds: 3600, refreshTokenSeconds: 86_400, legacyTokenSeconds: 1800 };

let keysDir: string;
let keyEvent: SigningKeyEvent;
let folder: KeyFolder;
const publicKeys = new PublicKeySet();
beforeAll(async () => {
  keysDir = mkdtempSync(join(tmpdir(), 'tessera-token-service-unit-'));
  folder = new KeyFolder(keysDir);
  keyEvent = await createSigningKey(folder, t0);
  publicKeys.apply(keyEvent);
});
afterAll(() => rmSync(keysDir, { recursive: true, force: true }));

let now: number;
let store: InMemoryEventStore;
let directory: CredentialDirectory;
let tokens: TokenService;
let announced: FamilyEvent[];
let keyring: SigningKeyring;
const account = (event: AccountEvent) => directory.apply(event);
const tokenService = (options: Partial<Pick<TokenServiceDeps, 'refreshReuse' | 'hashers'>> = {}, on = store) =>
  createTokenService({ store: on, directory, keyring, hashers: singleKeyHashers(hasher), issuer, lifetimes, now: () => now, onFamilyEvent: (event) => announced.push(event), ...options });

beforeEach(() => {
  now = t0;
  store = new InMemoryEventStore();
  directory = new CredentialDirectory();
  account({ type: 'AccountRegistered', v: 1, accountId: 'acct_1', name: 'Shop', permissions: ['transaction:charge'], at: t0 });
  account({ type: 'ApiCredentialIssued', v: 1, accountId: 'acct_1', credentialId: 'cred_1', apiLoginId: 'login_1', transactionKeyHash: hasher.hash('tsk_secret'), at: t0 });
  account({ type: 'LegacyCredentialIssued', v: 1, accountId: 'acct_1', credentialId: 'cred_v1', apiId: 'tla_1', apiKeyHash: hasher.hash('tlk_secret'), at: t0 });
  keyring = new SigningKeyring(folder);
  keyring.apply(keyEvent);
  announced = [];
  tokens = tokenService();
});

const verify = (token: string, audience: string = audiences.v5) => verifyAccessToken(token, { keys: publicKeys, issuer, audience, nowSeconds: now });
const claimsOf = (token: string) => {
  const verified = verify(token);
  if (!verified.ok) throw new Error(`token refused: ${verified.code}`);
  return verified.claims;
};
const refusalOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => (error instanceof IssuerRefusal ? error.code : error),
  );
const issue = () => tokens.getToken('login_1', 'tsk_secret', metadata);

describe('getToken (get-oauth-token)', () => {
  it('issues a signed access token and a refresh token of a new family, recorded as TokenIssued with the request metadata', async () => {
    const pair = await issue();
    const claims = claimsOf(pair.accessToken);
    expect(claims).toMatchObject({ iss: issuer, sub: 'acct_1', aud: audiences.v5, client_id: 'login_1', scope: 'transaction:charge', gen: 0, iat: t0, exp: t0 + 3600 });
    expect(pair).toMatchObject({ issuedAt: t0, expiresAt: t0 + 3600 });
    expect(familyOfRefreshToken(pair.refreshToken)).toBe(claims.fid);
    const recorded = await store.readStream(streams.family(claims.fid!));
    expect(recorded.map((r) => r.event)).toEqual([expect.objectContaining({ type: 'TokenIssued', generation: 0, refreshTokenHash: hasher.hash(pair.refreshToken) })]);
    expect(recorded[0]?.metadata).toEqual({ ...metadata, accountId: 'acct_1' });
    expect(announced).toEqual([recorded[0]?.event]);
  });

  it.each([
    ['a wrong Transaction Key', 'login_1', 'tsk_wrong'],
    ['an unknown API Login ID', 'login_nobody', 'tsk_secret'],
  ])('refuses %s as ERR_INVALID_CLIENT and appends nothing', async (_what, login, key) => {
    expect(await refusalOf(tokens.getToken(login, key, metadata))).toBe('ERR_INVALID_CLIENT');
    expect(await store.headPosition()).toBeUndefined();
  });
});

/** The in-memory store, whose appends fail once `refusing` is set, as a full disk's do. */
class RefusingStore extends InMemoryEventStore {
  refusing = false;
  override async append(stream: string, events: readonly NewEvent[], options: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    if (this.refusing) throw new EventStoreUnavailable('the disk is full');
    return super.append(stream, events, options);
  }
}

describe('a token whose event the store cannot take', () => {
  it('is never handed out: get, refresh and v1 authenticate whose append fails answer the failure, and the refresh token stays current', async () => {
    const log = new RefusingStore();
    const service = tokenService({}, log);
    const pair = await service.getToken('login_1', 'tsk_secret', metadata);
    log.refusing = true;
    const head = await log.headPosition();
    await expect(service.getToken('login_1', 'tsk_secret', metadata)).rejects.toBeInstanceOf(EventStoreUnavailable);
    await expect(service.refreshToken(pair.refreshToken, metadata)).rejects.toBeInstanceOf(EventStoreUnavailable);
    await expect(service.legacyAuthenticate('tla_1', 'tlk_secret', metadata)).rejects.toBeInstanceOf(EventStoreUnavailable);
    expect(await log.headPosition()).toBe(head);
    // The refresh token that failed to rotate is still the family's current one.
    log.refusing = false;
    expect(claimsOf((await service.refreshToken(pair.refreshToken, metadata)).accessToken)).toMatchObject({ gen: 1 });
  });
});

describe('refreshToken (refresh-oauth-token, the refresh token\'s states)', () => {
  it('rotates the family: a new pair of the next generation, with the permissions of now; the presented token is used up', async () => {
    const pair = await issue();
    account({ type: 'PermissionsChanged', v: 1, accountId: 'acct_1', permissions: ['reports:read'], at: t0 });
    now += 10;
    const next = await tokens.refreshToken(pair.refreshToken, metadata);
    expect(next.refreshToken).not.toBe(pair.refreshToken);
    expect(claimsOf(next.accessToken)).toMatchObject({ fid: claimsOf(pair.accessToken).fid, gen: 1, scope: 'reports:read', iat: t0 + 10 });
    expect(await refusalOf(tokens.refreshToken(pair.refreshToken, metadata))).toBe('ERR_REFRESH_TOKEN_USED');
    expect((await tokens.refreshToken(next.refreshToken, metadata)).refreshToken).toMatch(/^tsr_/);
    expect(announced.map((e) => e.type)).toEqual(['TokenIssued', 'TokenRotated', 'TokenRotated']);
  });

  it('refuses a token that is not one of ours, or names no family, as ERR_REFRESH_TOKEN_INVALID, appending nothing', async () => {
    expect(await refusalOf(tokens.refreshToken('garbage', metadata))).toBe('ERR_REFRESH_TOKEN_INVALID');
    expect(await refusalOf(tokens.refreshToken(`tsr_${'A'.repeat(22)}.${'B'.repeat(43)}`, metadata))).toBe('ERR_REFRESH_TOKEN_INVALID');
    expect(await store.headPosition()).toBeUndefined();
  });

  it('refuses an expired refresh token as ERR_REFRESH_TOKEN_EXPIRED, appending nothing', async () => {
    const pair = await issue();
    const head = await store.headPosition();
    now += lifetimes.refreshTokenSeconds;
    expect(await refusalOf(tokens.refreshToken(pair.refreshToken, metadata))).toBe('ERR_REFRESH_TOKEN_EXPIRED');
    expect(await store.headPosition()).toBe(head);
  });

  it('refuses to renew a family whose Transaction Key was rotated since, as ERR_CREDENTIAL_REVOKED', async () => {
    const pair = await issue();
    account({ type: 'ApiCredentialIssued', v: 1, accountId: 'acct_1', credentialId: 'cred_2', apiLoginId: 'login_1', transactionKeyHash: hasher.hash('tsk_new'), at: t0 });
    account({ type: 'ApiCredentialRevoked', v: 1, accountId: 'acct_1', credentialId: 'cred_1', apiLoginId: 'login_1', at: t0 });
    expect(await refusalOf(tokens.refreshToken(pair.refreshToken, metadata))).toBe('ERR_CREDENTIAL_REVOKED');
  });

  it('of 16 concurrent refreshes of one token, exactly one wins; the others are ERR_REFRESH_TOKEN_USED and append nothing', async () => {
    const pair = await issue();
    const outcomes = await Promise.allSettled(Array.from({ length: 16 }, () => tokens.refreshToken(pair.refreshToken, metadata)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
    expect(refused).toHaveLength(15);
    for (const reason of refused) expect(reason).toMatchObject({ name: 'IssuerRefusal', code: 'ERR_REFRESH_TOKEN_USED' });
    const fid = familyOfRefreshToken(pair.refreshToken)!;
    expect((await store.readStream(streams.family(fid))).map((r) => r.event.type)).toEqual(['TokenIssued', 'TokenRotated']);
  });

  it('a refresh racing a revoke of the same token: exactly one of them happens', async () => {
    const pair = await issue();
    const [refreshed, revoked] = await Promise.allSettled([tokens.refreshToken(pair.refreshToken, metadata), tokens.revokeToken(pair.refreshToken, metadata)]);
    expect([refreshed.status, revoked.status].sort()).toEqual(['fulfilled', 'rejected']);
    const fid = familyOfRefreshToken(pair.refreshToken)!;
    expect(await store.readStream(streams.family(fid))).toHaveLength(2);
  });
});

describe('revokeToken (revoke-oauth-token)', () => {
  it('revokes the family at the time of now; the token then neither refreshes nor revokes again', async () => {
    const pair = await issue();
    now += 5;
    expect(await tokens.revokeToken(pair.refreshToken, metadata)).toEqual({ revokedAt: t0 + 5 });
    expect(announced.at(-1)).toMatchObject({ type: 'TokenRevoked', generation: 0, revokedAt: t0 + 5 });
    expect(await refusalOf(tokens.refreshToken(pair.refreshToken, metadata))).toBe('ERR_REFRESH_TOKEN_REVOKED');
    expect(await refusalOf(tokens.revokeToken(pair.refreshToken, metadata))).toBe('ERR_REFRESH_TOKEN_REVOKED');
  });

  it('refuses a used refresh token: only the current one revokes', async () => {
    const pair = await issue();
    await tokens.refreshToken(pair.refreshToken, metadata);
    expect(await refusalOf(tokens.revokeToken(pair.refreshToken, metadata))).toBe('ERR_REFRESH_TOKEN_USED');
  });
});

describe('a family of this region revoked in another region (docs/decisions/0018)', () => {
  it('refuses its refresh as revoked from the moment the revocation arrives, appending nothing; other families refresh as before', async () => {
    const revokedElsewhere = new Set<string>();
    tokens = createTokenService({ store, directory, keyring, hashers: singleKeyHashers(hasher), issuer, lifetimes, now: () => now, isRevokedElsewhere: (familyId) => revokedElsewhere.has(familyId) });
    const [pair, other] = [await issue(), await issue()];
    const fid = familyOfRefreshToken(pair.refreshToken)!;
    revokedElsewhere.add(fid);
    expect(await refusalOf(tokens.refreshToken(pair.refreshToken, metadata))).toBe('ERR_REFRESH_TOKEN_REVOKED');
    expect(await store.readStream(streams.family(fid))).toHaveLength(1);
    expect((await tokens.refreshToken(other.refreshToken, metadata)).refreshToken).toMatch(/^tsr_/);
  });
});

/** TESSERA_REFRESH_REUSE (RFC 9700 section 4.14.2), docs/decisions/0010. */
describe('a used refresh token presented again', () => {
  const familyTypes = async (refreshToken: string) =>
    (await store.readStream(streams.family(familyOfRefreshToken(refreshToken)!))).map((r) => r.event.type);

  it('keep, the default: refused as used, nothing appended, and the newer pair lives on', async () => {
    const pair = await issue();
    const next = await tokens.refreshToken(pair.refreshToken, metadata);
    expect(await refusalOf(tokens.refreshToken(pair.refreshToken, metadata))).toBe('ERR_REFRESH_TOKEN_USED');
    expect(await familyTypes(pair.refreshToken)).toEqual(['TokenIssued', 'TokenRotated']);
    expect(await tokens.refreshToken(next.refreshToken, metadata)).toMatchObject({ refreshToken: expect.stringMatching(/^tsr_/) });
  });

  it('revoke-family: refused, and the family is revoked at its newest generation, so the newer pair dies too', async () => {
    tokens = tokenService({ refreshReuse: 'revoke-family' });
    const pair = await issue();
    now += 10;
    const next = await tokens.refreshToken(pair.refreshToken, metadata);
    now += 10;
    expect(await refusalOf(tokens.refreshToken(pair.refreshToken, metadata))).toBe('ERR_REFRESH_TOKEN_REUSED');
    const revoked = { type: 'TokenRevoked', generation: 1, revokedAt: t0 + 20, reason: 'refresh-token-reused' };
    expect(await familyTypes(pair.refreshToken)).toEqual(['TokenIssued', 'TokenRotated', 'TokenRevoked']);
    // Announced before the answer: this process's verifier rejects the newer access token at once.
    expect(announced.at(-1)).toMatchObject(revoked);
    expect(await refusalOf(tokens.refreshToken(next.refreshToken, metadata))).toBe('ERR_REFRESH_TOKEN_REVOKED');
  });

  it('revoke-family: a token used two rotations ago revokes the family too', async () => {
    tokens = tokenService({ refreshReuse: 'revoke-family' });
    const pair = await issue();
    const second = await tokens.refreshToken(pair.refreshToken, metadata);
    await tokens.refreshToken(second.refreshToken, metadata);
    expect(await refusalOf(tokens.refreshToken(pair.refreshToken, metadata))).toBe('ERR_REFRESH_TOKEN_REUSED');
    expect(announced.at(-1)).toMatchObject({ type: 'TokenRevoked', generation: 2, reason: 'refresh-token-reused' });
  });

  it('revoke-family: a token the family never issued, though it names the family, is refused as used and revokes nothing', async () => {
    tokens = tokenService({ refreshReuse: 'revoke-family' });
    const pair = await issue();
    const forged = `tsr_${familyOfRefreshToken(pair.refreshToken)!}.${'B'.repeat(43)}`;
    expect(await refusalOf(tokens.refreshToken(forged, metadata))).toBe('ERR_REFRESH_TOKEN_USED');
    expect(await familyTypes(pair.refreshToken)).toEqual(['TokenIssued']);
    expect(await tokens.refreshToken(pair.refreshToken, metadata)).toMatchObject({ refreshToken: expect.stringMatching(/^tsr_/) });
  });

  it('revoke-family: a current token rotates reading the last event alone; only a refused one reads the whole family', async () => {
    const reads: (number | undefined)[] = [];
    const counting = Object.assign(Object.create(store) as InMemoryEventStore, {
      readStream: (stream: string, options?: { maxCount?: number }) => (reads.push(options?.maxCount), store.readStream(stream, options)),
    });
    tokens = tokenService({ refreshReuse: 'revoke-family' }, counting);
    const pair = await issue();
    await tokens.refreshToken(pair.refreshToken, metadata);
    expect(reads).toEqual([1]);
    await refusalOf(tokens.refreshToken(pair.refreshToken, metadata));
    expect(reads).toEqual([1, 1, undefined]);
  });

  it('revoke-family: of 16 concurrent refreshes of one token, one gets a pair and the losers revoke the family: losing a race is a reuse', async () => {
    tokens = tokenService({ refreshReuse: 'revoke-family' });
    const pair = await issue();
    const outcomes = await Promise.allSettled(Array.from({ length: 16 }, () => tokens.refreshToken(pair.refreshToken, metadata)));
    const won = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    expect(won).toHaveLength(1);
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [(o.reason as IssuerRefusal).code] : []));
    expect(refused).toHaveLength(15);
    expect(new Set(refused)).toEqual(new Set(['ERR_REFRESH_TOKEN_REUSED', 'ERR_REFRESH_TOKEN_REVOKED']));
    expect(await familyTypes(pair.refreshToken)).toEqual(['TokenIssued', 'TokenRotated', 'TokenRevoked']);
    expect(await refusalOf(tokens.refreshToken(won[0]!.refreshToken, metadata))).toBe('ERR_REFRESH_TOKEN_REVOKED');
  });
});

describe('refresh and revoke refusals', () => {
  const messageOf = (promise: Promise<unknown>) =>
    promise.then(
      () => 'accepted',
      (error: unknown) => (error instanceof IssuerRefusal ? error.message : String(error)),
    );

  it('say the same thing whatever the cause, so a guessed secret for a public family id learns nothing; the code keeps the cause', async () => {
    const used = await issue();
    await tokens.refreshToken(used.refreshToken, metadata);
    const revoked = await issue();
    await tokens.revokeToken(revoked.refreshToken, metadata);
    const active = await issue();
    const rotatedKey = await issue();
    const expiring = await issue();
    const guess = (refreshToken: string) => `tsr_${familyOfRefreshToken(refreshToken)!}.${'B'.repeat(43)}`;

    const causes: [string, () => Promise<unknown>][] = [];
    for (const [name, operation] of [
      ['refresh', (token: string) => tokens.refreshToken(token, metadata)],
      ['revoke', (token: string) => tokens.revokeToken(token, metadata)],
    ] as const) {
      causes.push(
        [`${name}: not ours`, () => operation('garbage')],
        [`${name}: unknown family`, () => operation(`tsr_${'A'.repeat(22)}.${'B'.repeat(43)}`)],
        [`${name}: used`, () => operation(used.refreshToken)],
        [`${name}: revoked family, right secret`, () => operation(revoked.refreshToken)],
        [`${name}: revoked family, guessed secret`, () => operation(guess(revoked.refreshToken))],
        [`${name}: active family, guessed secret`, () => operation(guess(active.refreshToken))],
      );
    }
    const messages = new Map<string, string>();
    for (const [cause, attempt] of causes) messages.set(cause, await messageOf(attempt()));
    // The log still tells them apart.
    expect(await refusalOf(tokens.refreshToken(revoked.refreshToken, metadata))).toBe('ERR_REFRESH_TOKEN_REVOKED');
    expect(await refusalOf(tokens.refreshToken(guess(active.refreshToken), metadata))).toBe('ERR_REFRESH_TOKEN_USED');
    account({ type: 'ApiCredentialIssued', v: 1, accountId: 'acct_1', credentialId: 'cred_2', apiLoginId: 'login_1', transactionKeyHash: hasher.hash('tsk_new'), at: t0 });
    account({ type: 'ApiCredentialRevoked', v: 1, accountId: 'acct_1', credentialId: 'cred_1', apiLoginId: 'login_1', at: t0 });
    messages.set('refresh: Transaction Key rotated', await messageOf(tokens.refreshToken(rotatedKey.refreshToken, metadata)));
    now += lifetimes.refreshTokenSeconds;
    messages.set('refresh: expired', await messageOf(tokens.refreshToken(expiring.refreshToken, metadata)));
    messages.set('revoke: expired', await messageOf(tokens.revokeToken(expiring.refreshToken, metadata)));

    expect(messages.size).toBe(15);
    expect(new Set(messages.values())).toEqual(new Set(['the refresh token is not valid (unknown, expired, already used or revoked): get a new pair with get-oauth-token']));
  });
});

describe('legacyAuthenticate (/v1/authenticate)', () => {
  it('issues a v1 token of its own audience, recorded as LegacyTokenIssued on the account', async () => {
    const token = await tokens.legacyAuthenticate('tla_1', 'tlk_secret', metadata);
    expect(token.expiresInSeconds).toBe(1800);
    expect(verify(token.authenticationToken, audiences.v5)).toEqual({ ok: false, code: 'ERR_TOKEN_AUDIENCE' });
    const verified = verify(token.authenticationToken, audiences.v1);
    expect(verified.ok && verified.claims).toMatchObject({ sub: 'acct_1', client_id: 'tla_1', scope: 'transaction:charge', exp: t0 + 1800 });
    expect((await store.readStream(streams.legacyTokens('acct_1'))).map((r) => r.event.type)).toEqual(['LegacyTokenIssued']);
  });

  it('refuses a wrong API Key as ERR_INVALID_CLIENT, appending nothing', async () => {
    expect(await refusalOf(tokens.legacyAuthenticate('tla_1', 'tlk_wrong', metadata))).toBe('ERR_INVALID_CLIENT');
    expect(await store.headPosition()).toBeUndefined();
  });
});

/** After a cut, new tokens carry an iat the cut does not refuse (token-cut.ts in the domain). */
describe('tokens issued in the second of a cut', () => {
  const cutAccount = () =>
    account({ type: 'AccountTokensRevoked', v: 1, accountId: 'acct_1', notBefore: t0 + 1, rejectsUntil: t0 + 3600, reason: 'permissions-changed', at: t0 });

  it('get, refresh and v1 authenticate date the token at the cut\'s notBefore, expiries counted from it', async () => {
    const before = await issue();
    cutAccount();
    const pair = await issue();
    expect(claimsOf(pair.accessToken)).toMatchObject({ iat: t0 + 1, exp: t0 + 1 + 3600 });
    const refreshed = await tokens.refreshToken(before.refreshToken, metadata);
    expect(claimsOf(refreshed.accessToken)).toMatchObject({ iat: t0 + 1, gen: 1 });
    const legacy = await tokens.legacyAuthenticate('tla_1', 'tlk_secret', metadata);
    const v1 = verify(legacy.authenticationToken, audiences.v1);
    expect(v1.ok && v1.claims.iat).toBe(t0 + 1);
    expect(legacy.expiresInSeconds).toBe(1800);
  });

  it('a credential cut dates only that client id\'s tokens; once the clock passes notBefore, tokens carry the time again', async () => {
    account({ type: 'CredentialTokensRevoked', v: 1, accountId: 'acct_1', credentialId: 'cred_v1', apiId: 'tla_1', notBefore: t0 + 1, rejectsUntil: t0 + 1800, reason: 'legacy-key-revoked', at: t0 });
    expect(claimsOf((await issue()).accessToken).iat).toBe(t0);
    now = t0 + 5;
    const legacy = await tokens.legacyAuthenticate('tla_1', 'tlk_secret', metadata);
    const v1 = verify(legacy.authenticationToken, audiences.v1);
    expect(v1.ok && v1.claims.iat).toBe(t0 + 5);
  });
});

/** The log moved to a new secret-hashing key (keys rotate-hashing): the service is given both keys, the old one retired. */
describe('after a rotation of the secret-hashing key', () => {
  const newHasher = createSecretHasher(Buffer.alloc(32, 8));
  /** The process's keyring: new hashes under the new key; a stored hash under the key it names (none: the log's first, the old key). */
  const rotated = (current: () => SecretHasher = () => newHasher): SecretHashers => ({
    current,
    hashUnder: (fingerprint, secret) => (fingerprint === newHasher.fingerprint ? newHasher : hasher).hash(secret),
    decoy: (secret) => newHasher.hash(secret),
  });

  it('a Transaction Key and an API Key hashed under the old key still authenticate; the new family and its rotations are hashed under the new key and say so', async () => {
    const pair = await issue();
    tokens = tokenService({ hashers: rotated() });
    const renewed = await tokens.refreshToken(pair.refreshToken, metadata);
    const fresh = await tokens.getToken('login_1', 'tsk_secret', metadata);
    expect((await tokens.legacyAuthenticate('tla_1', 'tlk_secret', metadata)).authenticationToken).toMatch(/^eyJ/);
    const [issued, rotatedEvent] = [announced.at(-1), announced.at(-2)];
    expect(rotatedEvent).toMatchObject({ type: 'TokenRotated', refreshTokenHash: newHasher.hash(renewed.refreshToken), hashingKey: newHasher.fingerprint });
    expect(issued).toMatchObject({ type: 'TokenIssued', refreshTokenHash: newHasher.hash(fresh.refreshToken), hashingKey: newHasher.fingerprint });
    expect(await refusalOf(tokens.getToken('login_1', 'tsk_wrong', metadata))).toBe('ERR_INVALID_CLIENT');
  });

  it('with the new key not at hand, nothing is hashed with the old one: get and refresh are refused as the key\'s outage, appending nothing; revoke still works', async () => {
    const pair = await issue();
    const head = await store.headPosition();
    tokens = tokenService({
      hashers: rotated(() => {
        throw new SecretHashingKeyUnavailable('the new key is not in this data folder');
      }),
    });
    await expect(tokens.getToken('login_1', 'tsk_secret', metadata)).rejects.toMatchObject({ code: 'ERR_SECRET_HASHING_KEY_UNAVAILABLE' });
    await expect(tokens.refreshToken(pair.refreshToken, metadata)).rejects.toMatchObject({ code: 'ERR_SECRET_HASHING_KEY_UNAVAILABLE' });
    expect(await store.headPosition()).toBe(head);
    await expect(tokens.revokeToken(pair.refreshToken, metadata)).resolves.toMatchObject({ revokedAt: t0 });
  });
});

describe('a disabled account', () => {
  const disable = () => account({ type: 'AccountDisabled', v: 1, accountId: 'acct_1', actor: 'cli', at: now });
  const enable = () => account({ type: 'AccountEnabled', v: 1, accountId: 'acct_1', actor: 'cli', at: now });

  it('gets no token, v5 or v1, and is answered as a wrong key is; enabled, it gets them again', async () => {
    disable();
    expect(await refusalOf(issue())).toBe('ERR_INVALID_CLIENT');
    expect(await refusalOf(tokens.legacyAuthenticate('tla_1', 'tlk_secret', metadata))).toBe('ERR_INVALID_CLIENT');
    expect(await store.headPosition()).toBeUndefined();
    now += 5;
    enable();
    expect((await issue()).accessToken).toEqual(expect.any(String));
    expect((await tokens.legacyAuthenticate('tla_1', 'tlk_secret', metadata)).authenticationToken).toEqual(expect.any(String));
  });

  it('refreshes no family while disabled, and none issued before the disable once enabled, even one nobody revoked (homed in a region that only heard of the disable)', async () => {
    const before = await issue();
    now += 10;
    disable();
    expect(await refusalOf(tokens.refreshToken(before.refreshToken, metadata))).toBe('ERR_CREDENTIAL_REVOKED');
    now += 10;
    enable();
    expect(await refusalOf(tokens.refreshToken(before.refreshToken, metadata))).toBe('ERR_REFRESH_TOKEN_REVOKED');
    // A family got after the enable, in the same second, refreshes as any does.
    const after = await issue();
    expect((await tokens.refreshToken(after.refreshToken, metadata)).refreshToken).toEqual(expect.any(String));
  });
});
