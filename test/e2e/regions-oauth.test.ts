import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { writeSharedCertificate } from '../support/shared-certificate.js';
import { freePort, startTessera, type Credentials, type HttpAnswer, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/**
 * The OAuth 2.0 door of two regions, through the real all-in-ones and the real peer link: a family
 * made at a's /oauth2/token is refreshed and revoked at b's, which authenticates the client (its
 * account reached b on a's account topic), checks any DPoP proof against its own token endpoint,
 * and forwards to a with the peer secret. With a stopped, b answers a refresh 503 and decides a
 * revoke from the check material (a's family topic). One broker stands in for both regions', as in
 * regions-revoke-anywhere: a's relay publishes straight to the names MirrorMaker 2 would give its
 * topics in b.
 */
const { brokers } = kafkaTestEnvironment('regions OAuth e2e');
const base = `t${process.pid}x${Date.now()}o`;
const secret = randomBytes(32).toString('base64url');

interface TokenAnswer {
  access_token: string;
  token_type: string;
  refresh_token: string;
}
interface ProofKey {
  readonly privateKey: CryptoKey;
  readonly jwk: JWK;
  readonly jkt: string;
}

const basic = (account: Credentials) => `Basic ${Buffer.from(`${account.api_login_id}:${account.transaction_key}`).toString('base64')}`;
const metric = async (server: TesseraProcess, series: string) => {
  const line = (await server.adminRequest('/metrics')).text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? Number.NaN : Number(line.slice(series.length + 1));
};

async function proofKey(): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256') };
}
const proof = (key: ProofKey, htu: string) =>
  new SignJWT({ jti: crypto.randomUUID(), htm: 'POST', htu, iat: Math.floor(Date.now() / 1000) }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }).sign(key.privateKey);

describe.skipIf(!brokers)('two regions: the OAuth 2.0 token and revocation endpoints for a family homed in the other', () => {
  const folders = { a: mkdtempSync(join(tmpdir(), 'tessera-oauth-a-')), b: mkdtempSync(join(tmpdir(), 'tessera-oauth-b-')) };
  let a: TesseraProcess;
  let b: TesseraProcess;
  let account: Credentials;
  let other: Credentials;
  let issuerA: string;
  let issuerB: string;
  /** Made at a while it runs, revoked at b once it is stopped. */
  let revokedWhileAway: TokenAnswer;

  beforeAll(async () => {
    await writeSharedCertificate(Object.values(folders));
    const [portA, portB] = [await freePort(), await freePort()];
    issuerA = `https://localhost:${portA}`;
    issuerB = `https://localhost:${portB}`;
    const common = { TESSERA_KAFKA_BROKERS: brokers!, TESSERA_PEER_SECRET: secret, NODE_EXTRA_CA_CERTS: join(folders.a, 'tls', 'self-signed.crt'), TESSERA_PEER_PROBE_INTERVAL: '0.2' };
    a = await startTessera(
      {
        ...common,
        TESSERA_REGION: 'a',
        TESSERA_PORT: String(portA),
        TESSERA_PUBLIC_URL: issuerA,
        TESSERA_ACCEPTED_ISSUERS: issuerB,
        TESSERA_PEER_REGIONS: `b=https://localhost:${portB}`,
        TESSERA_KAFKA_TOPIC: `a.${base}.revocations`,
        TESSERA_KAFKA_ACCOUNT_TOPIC: `a.${base}.accounts`,
        TESSERA_KAFKA_FAMILY_TOPIC: `a.${base}.families`,
        TESSERA_MIRRORED_REGIONS: 'none',
      },
      { dataDir: folders.a, keepData: true },
    );
    // One secret-hashing key for every region: b checks a's credentials and hashes with it.
    mkdirSync(join(folders.b, 'keys'), { recursive: true, mode: 0o700 });
    copyFileSync(join(folders.a, 'keys', 'secret-hashing.key'), join(folders.b, 'keys', 'secret-hashing.key'));
    b = await startTessera(
      {
        ...common,
        TESSERA_REGION: 'b',
        TESSERA_PORT: String(portB),
        TESSERA_PUBLIC_URL: issuerB,
        TESSERA_ACCEPTED_ISSUERS: issuerA,
        TESSERA_PEER_REGIONS: `a=https://localhost:${portA}`,
        TESSERA_KAFKA_TOPIC: `${base}.revocations`,
        TESSERA_KAFKA_ACCOUNT_TOPIC: `${base}.accounts`,
        TESSERA_KAFKA_FAMILY_TOPIC: `${base}.families`,
        TESSERA_MIRRORED_REGIONS: 'a',
      },
      { dataDir: folders.b },
    );
    account = await a.createAccount({ name: 'Shop' });
    other = await a.createAccount({ name: 'Other shop' });
    // b learns the accounts from a's account topic. Each try comes from another address, so no failure budget fills up.
    let attempt = 0;
    for (const client of [account, other]) {
      await until(async () => (await token(b, client, { grant_type: 'client_credentials' }, {}, `127.0.1.${(attempt += 1)}`)).status, `b to accept ${client.api_login_id}`, {
        done: (status) => status === 200,
        timeoutMs: 20_000,
        everyMs: 200,
      });
    }
    revokedWhileAway = (await token(a, account, { grant_type: 'client_credentials' })).json() as unknown as TokenAnswer;
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    for (const folder of Object.values(folders)) rmSync(folder, { recursive: true, force: true });
  });

  function form(server: TesseraProcess, path: string, client: Credentials | undefined, fields: Record<string, string>, headers: Record<string, string> = {}, localAddress?: string): Promise<HttpAnswer> {
    return server.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(client === undefined ? {} : { authorization: basic(client) }), ...headers },
      body: new URLSearchParams(fields).toString(),
      ...(localAddress === undefined ? {} : { localAddress }),
    });
  }
  function token(server: TesseraProcess, client: Credentials | undefined, fields: Record<string, string>, headers: Record<string, string> = {}, localAddress?: string): Promise<HttpAnswer> {
    return form(server, '/oauth2/token', client, fields, headers, localAddress);
  }
  const familyAtA = async (headers: Record<string, string> = {}) => {
    const answer = await token(a, account, { grant_type: 'client_credentials' }, headers);
    expect(answer.status).toBe(200);
    return answer.json() as unknown as TokenAnswer; // RFC 6749 section 5.1: these members are strings
  };
  const charge = (server: TesseraProcess, accessToken: string) => server.request('/forward-auth?permission=transaction:charge', { headers: { authorization: `Bearer ${accessToken}` } });
  const expectOAuthError = (answer: HttpAnswer, status: number, error: string) => {
    expect(answer.status).toBe(status);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.json().error).toBe(error);
  };

  it('refreshes at b a family made at a: rotated at home, single use in both regions, iss is b\'s, and both verifiers take it', async () => {
    const first = await familyAtA();
    const fid = decodeJwt(first.access_token).fid as string;
    expect(fid).toMatch(/^a_/);
    expect(decodeJwt(first.access_token).iss).toBe(issuerA);
    const answer = await token(b, account, { grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(answer.status).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers['dpop-nonce']).toBeUndefined();
    const next = answer.json() as unknown as TokenAnswer;
    expect(next.token_type).toBe('Bearer');
    const claims = decodeJwt(next.access_token);
    expect(claims).toMatchObject({ fid, iss: issuerB });
    // Rotated at home: b forwarded it and appended nothing of its own.
    await expect.poll(() => b.logs().includes('"forwarded to the home region"'), { timeout: 2_000, interval: 20 }).toBe(true);
    for (const region of [a, b]) expectOAuthError(await token(region, account, { grant_type: 'refresh_token', refresh_token: first.refresh_token }), 400, 'invalid_grant');
    // b's iss is accepted at b, and at a (TESSERA_ACCEPTED_ISSUERS); b verifies a's key once it is mirrored.
    expect((await charge(a, next.access_token)).status).toBe(200);
    await expect.poll(async () => (await charge(b, next.access_token)).status, { timeout: 10_000, interval: 50 }).toBe(200);
    // The next refresh works at home, where it gets a's iss.
    const atHome = await token(a, account, { grant_type: 'refresh_token', refresh_token: next.refresh_token });
    expect(atHome.status).toBe(200);
    expect(decodeJwt(String(atHome.json().access_token)).iss).toBe(issuerA);
  });

  it('relays home\'s refusal: another client\'s refresh token is an invalid_grant at b, and the family is untouched', async () => {
    const family = await familyAtA();
    expectOAuthError(await token(b, other, { grant_type: 'refresh_token', refresh_token: family.refresh_token }), 400, 'invalid_grant');
    expect((await token(b, account, { grant_type: 'refresh_token', refresh_token: family.refresh_token })).status).toBe(200);
  });

  it('gives forged peer headers without the secret nothing: no client, no issuer, no DPoP key, and a wrong secret is an invalid_client', async () => {
    const family = await familyAtA();
    const forged = { 'tessera-forwarded-client-id': account.api_login_id, 'tessera-forwarded-oauth-issuer': 'https://evil.example', 'tessera-forwarded-dpop-jkt': 'A'.repeat(43) };
    // Without client authentication, the forged client is no client.
    expectOAuthError(await token(a, undefined, { grant_type: 'refresh_token', refresh_token: family.refresh_token }, forged), 401, 'invalid_client');
    // A wrong peer secret is refused before the token is looked at, in RFC 6749's shape.
    const wrong = await token(a, undefined, { grant_type: 'refresh_token', refresh_token: family.refresh_token }, { ...forged, 'tessera-peer-secret': randomBytes(32).toString('base64url'), 'tessera-forwarded-for': '192.0.2.7' });
    expectOAuthError(wrong, 401, 'invalid_client');
    expectOAuthError(await form(a, '/oauth2/revoke', undefined, { token: family.refresh_token }, forged), 401, 'invalid_client');
    // With the client's own credentials the headers change nothing: a's iss, a bearer token; and the token was not spent before.
    const refreshed = await token(a, account, { grant_type: 'refresh_token', refresh_token: family.refresh_token }, forged);
    expect(refreshed.status).toBe(200);
    expect(refreshed.json().token_type).toBe('Bearer');
    const claims = decodeJwt(String(refreshed.json().access_token));
    expect(claims.iss).toBe(issuerA);
    expect(claims.cnf).toBeUndefined();
    // Another client's credentials with this client's name in the header: still the other client's request.
    const next = refreshed.json() as unknown as TokenAnswer;
    expectOAuthError(await token(a, other, { grant_type: 'refresh_token', refresh_token: next.refresh_token }, forged), 400, 'invalid_grant');
    expect((await token(a, account, { grant_type: 'refresh_token', refresh_token: next.refresh_token })).status).toBe(200);
  });

  it('refreshes at b a DPoP-bound family with a proof for b\'s token endpoint: it stays bound; a proof by another key, or for a\'s endpoint, is refused', async () => {
    const key = await proofKey();
    const family = await familyAtA({ dpop: await proof(key, `${issuerA}/oauth2/token`) });
    expect(family.token_type).toBe('DPoP');
    const refreshAtB = async (by: ProofKey, htu: string) => token(b, account, { grant_type: 'refresh_token', refresh_token: family.refresh_token }, { dpop: await proof(by, htu) });
    // The htu is the URL the client addressed: b's token endpoint, not home's.
    expectOAuthError(await refreshAtB(key, `${issuerA}/oauth2/token`), 400, 'invalid_dpop_proof');
    expectOAuthError(await refreshAtB(await proofKey(), `${issuerB}/oauth2/token`), 400, 'invalid_dpop_proof');
    const answer = await refreshAtB(key, `${issuerB}/oauth2/token`);
    expect(answer.status).toBe(200);
    const next = answer.json() as unknown as TokenAnswer;
    expect(next.token_type).toBe('DPoP');
    expect(decodeJwt(next.access_token)).toMatchObject({ iss: issuerB, cnf: { jkt: key.jkt } });
    // Still bound: without a proof the next refresh is refused, at b as at home.
    expectOAuthError(await token(b, account, { grant_type: 'refresh_token', refresh_token: next.refresh_token }), 400, 'invalid_dpop_proof');
    expect((await token(a, account, { grant_type: 'refresh_token', refresh_token: next.refresh_token }, { dpop: await proof(key, `${issuerA}/oauth2/token`) })).status).toBe(200);
  });

  it('revokes at b a family made at a: home records it, and a\'s verifier refuses its access token', async () => {
    const family = await familyAtA();
    expectOAuthError(await form(b, '/oauth2/revoke', other, { token: family.refresh_token }), 400, 'unauthorized_client');
    expect((await charge(a, family.access_token)).status).toBe(200);
    const answer = await form(b, '/oauth2/revoke', account, { token: family.refresh_token, token_type_hint: 'refresh_token' });
    expect(answer.status).toBe(200);
    expect(answer.json()).toEqual({});
    expect((await charge(a, family.access_token)).status).toBe(401);
    expectOAuthError(await token(a, account, { grant_type: 'refresh_token', refresh_token: family.refresh_token }), 400, 'invalid_grant');
    // RFC 7009 section 2.2: the same token again, forwarded, is a 200 that changes nothing.
    expect((await form(b, '/oauth2/revoke', account, { token: family.refresh_token })).status).toBe(200);
  });

  it('revokes at b by an access token of a family made at a, forwarded with b\'s issuer for home to accept', async () => {
    const family = await familyAtA();
    const refreshed = (await token(b, account, { grant_type: 'refresh_token', refresh_token: family.refresh_token })).json() as unknown as TokenAnswer;
    await expect.poll(async () => (await charge(b, refreshed.access_token)).status, { timeout: 10_000, interval: 50 }).toBe(200);
    expect((await form(b, '/oauth2/revoke', account, { token: refreshed.access_token, token_type_hint: 'access_token' })).status).toBe(200);
    expect((await charge(a, refreshed.access_token)).status).toBe(401);
    expectOAuthError(await token(a, account, { grant_type: 'refresh_token', refresh_token: refreshed.refresh_token }), 400, 'invalid_grant');
  });

  it('with a stopped: a refresh at b is a 503 temporarily_unavailable with Retry-After, and a revoke at b is decided there', async () => {
    // b holds the family's check material from a's family topic before a goes away.
    await expect.poll(() => metric(b, 'tessera_family_check_entries'), { timeout: 15_000, interval: 50 }).toBeGreaterThanOrEqual(1);
    await expect.poll(async () => (await charge(b, revokedWhileAway.access_token)).status, { timeout: 10_000, interval: 50 }).toBe(200);
    a.signal('SIGTERM');
    await a.exited;
    const refresh = await token(b, account, { grant_type: 'refresh_token', refresh_token: revokedWhileAway.refresh_token });
    expectOAuthError(refresh, 503, 'temporarily_unavailable');
    expect(refresh.headers['retry-after']).toMatch(/^\d+$/);
    // Another client may not revoke it here either.
    expectOAuthError(await form(b, '/oauth2/revoke', other, { token: revokedWhileAway.refresh_token }), 400, 'unauthorized_client');
    const revoke = await form(b, '/oauth2/revoke', account, { token: revokedWhileAway.refresh_token });
    expect(revoke.status).toBe(200);
    expect(revoke.json()).toEqual({});
    expect((await charge(b, revokedWhileAway.access_token)).status).toBe(401);
    // A family b never heard of cannot be proven here: 503, never a false 200.
    const unknown = await form(b, '/oauth2/revoke', account, { token: `tsr_a_${randomBytes(16).toString('base64url')}.${randomBytes(32).toString('base64url')}` });
    expectOAuthError(unknown, 503, 'temporarily_unavailable');
    expect(a.logs()).not.toContain(secret);
    expect(b.logs()).not.toContain(secret);
  });
});
