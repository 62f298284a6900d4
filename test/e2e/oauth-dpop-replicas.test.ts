import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/**
 * DPoP across the replicas of a region: two `tessera issuer` processes on one data folder behind one
 * public URL (what a load balancer gives them), nonces required. What holds across them is what
 * docs/oauth.md says: a nonce either gave out is taken by the other, a bound family is bound at
 * both, and a refresh token is single use across both; a proof's jti is single use per process.
 */
const publicUrl = 'https://auth.replicas.test';
const tokenEndpoint = `${publicUrl}/oauth2/token`;
let dataDir: string;
let replicaA: TesseraProcess;
let replicaB: TesseraProcess;
let account: Credentials;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'tessera-e2e-dpop-replicas-'));
  const env = { TESSERA_PUBLIC_URL: publicUrl, TESSERA_DPOP_NONCE: 'required' };
  replicaA = await startTessera({ ...env, TESSERA_KEYS_DIR: mkdtempSync(join(dataDir, 'keys-a-')) }, { command: 'issuer', dataDir, keepData: true });
  replicaB = await startTessera({ ...env, TESSERA_KEYS_DIR: mkdtempSync(join(dataDir, 'keys-b-')) }, { command: 'issuer', dataDir, keepData: true });
  account = await replicaA.createAccount({ permissions: ['transaction:charge'] });
  // Replica B follows the same log on its own poll.
  await until(() => tokenRequest(replicaB, { grant_type: 'client_credentials' }), 'replica B to know the new account', { done: (answer) => answer.status === 200, timeoutMs: 10_000, everyMs: 50 });
});
afterAll(async () => {
  await replicaB?.stop();
  await replicaA?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

interface ProofKey {
  readonly privateKey: CryptoKey;
  readonly jwk: JWK;
  readonly jkt: string;
}
async function proofKey(): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256') };
}
const proof = (key: ProofKey, nonce: string) =>
  new SignJWT({ jti: crypto.randomUUID(), htm: 'POST', htu: tokenEndpoint, iat: Math.floor(Date.now() / 1000), nonce })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk })
    .sign(key.privateKey);
const tokenRequest = (replica: TesseraProcess, form: Record<string, string>, dpop?: string) =>
  replica.request('/oauth2/token', {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${account.api_login_id}:${account.transaction_key}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
      ...(dpop === undefined ? {} : { dpop }),
    },
    body: new URLSearchParams(form).toString(),
  });
/** The nonce a replica gives out now: every answer of its token endpoint carries it. */
const nonceFrom = async (replica: TesseraProcess) => (await tokenRequest(replica, { grant_type: 'client_credentials' }, 'not-a-proof')).headers['dpop-nonce'] as string;

describe('DPoP across two issuer replicas of one log', () => {
  it('a nonce replica A gave out is taken at replica B', async () => {
    const key = await proofKey();
    const answer = await tokenRequest(replicaB, { grant_type: 'client_credentials' }, await proof(key, await nonceFrom(replicaA)));
    expect(answer.status).toBe(200);
    expect(answer.json()).toMatchObject({ token_type: 'DPoP' });
  });

  it('a family bound at A refreshes at B only with its key, and its refresh token is single use across both', async () => {
    const key = await proofKey();
    const issued = await tokenRequest(replicaA, { grant_type: 'client_credentials' }, await proof(key, await nonceFrom(replicaA)));
    expect(issued.status).toBe(200);
    const refreshToken = issued.json().refresh_token as string;

    const other = await proofKey();
    const wrongKey = await tokenRequest(replicaB, { grant_type: 'refresh_token', refresh_token: refreshToken }, await proof(other, await nonceFrom(replicaB)));
    expect(wrongKey.json()).toMatchObject({ error: 'invalid_dpop_proof' });

    const refreshProof = await proof(key, await nonceFrom(replicaB));
    const refreshed = await tokenRequest(replicaB, { grant_type: 'refresh_token', refresh_token: refreshToken }, refreshProof);
    expect(refreshed.status).toBe(200);
    expect(decodeJwt(refreshed.json().access_token as string)).toMatchObject({ cnf: { jkt: key.jkt }, gen: 1, iss: publicUrl });

    // The same request replayed at A, within the proof's window: the proof's jti is A's to see for
    // the first time, but the refresh token was used on the log both replicas share.
    const replayed = await tokenRequest(replicaA, { grant_type: 'refresh_token', refresh_token: refreshToken }, refreshProof);
    expect(replayed.status).toBe(400);
    expect(replayed.json()).toMatchObject({ error: 'invalid_grant' });
    // At B itself the proof is refused first: B spent its jti.
    expect((await tokenRequest(replicaB, { grant_type: 'refresh_token', refresh_token: refreshToken }, refreshProof)).json()).toMatchObject({ error: 'invalid_dpop_proof' });
  });

  it('a client_credentials proof replayed at the other replica within its window is taken there once: jtis are per process', async () => {
    const key = await proofKey();
    const once = await proof(key, await nonceFrom(replicaA));
    expect((await tokenRequest(replicaA, { grant_type: 'client_credentials' }, once)).status).toBe(200);
    expect((await tokenRequest(replicaA, { grant_type: 'client_credentials' }, once)).json()).toMatchObject({ error: 'invalid_dpop_proof' });
    // What docs/oauth.md states: the replay needs the client's credentials too, and yields a token
    // bound to the same key, useless without its private key.
    const atB = await tokenRequest(replicaB, { grant_type: 'client_credentials' }, once);
    expect(atB.status).toBe(200);
    expect(decodeJwt(atB.json().access_token as string).cnf).toEqual({ jkt: key.jkt });
    expect((await tokenRequest(replicaB, { grant_type: 'client_credentials' }, once)).json()).toMatchObject({ error: 'invalid_dpop_proof' });
  });
});
