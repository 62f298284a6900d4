import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type HttpAnswer, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/**
 * Two issuer processes on one SQLite data folder, each with its own
 * TESSERA_KEYS_DIR. `keys rotate` run against one folder must not take the other issuer's key
 * away; retiring that key by name makes its issuer publish a new one.
 */
let dataDir: string;
let keysA: string;
let keysB: string;
let issuerA: TesseraProcess;
let issuerB: TesseraProcess;
let account: Credentials;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'tessera-e2e-shared-'));
  keysA = mkdtempSync(join(tmpdir(), 'tessera-e2e-keys-a-'));
  keysB = mkdtempSync(join(tmpdir(), 'tessera-e2e-keys-b-'));
  issuerA = await startTessera({ TESSERA_KEYS_DIR: keysA }, { command: 'issuer', dataDir, keepData: true });
  issuerB = await startTessera({ TESSERA_KEYS_DIR: keysB }, { command: 'issuer', dataDir, keepData: true });
  account = await issuerA.createAccount();
  // createAccount waits for issuer A; issuer B follows the same log on its own poll.
  await until(() => getToken(issuerB), 'issuer B to accept the new account', { done: (answer) => answer.status === 200, timeoutMs: 5_000, everyMs: 50 });
});
afterAll(async () => {
  await issuerB?.stop();
  await issuerA?.stop();
  for (const dir of [dataDir, keysA, keysB]) if (dir) rmSync(dir, { recursive: true, force: true });
});

const getToken = (issuer: TesseraProcess) =>
  issuer.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
const kidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;
const tokenOf = (answer: HttpAnswer) => (answer.json() as { token: string }).token;
/** Verifies with the JWKS an issuer serves, as a relying party would. */
const verifies = async (issuer: TesseraProcess, token: string) => {
  const jwks = (await issuer.request('/.well-known/jwks.json')).json() as unknown as JSONWebKeySet;
  return jwtVerify(token, createLocalJWKSet(jwks), { issuer: 'urn:tessera:issuer' }).then(
    () => true,
    () => false,
  );
};
/** Asks for tokens one after another until stopped; every answer is kept. */
function keepAsking(issuer: TesseraProcess) {
  const answers: HttpAnswer[] = [];
  let stopped = false;
  const done = (async () => {
    while (!stopped) answers.push(await getToken(issuer));
  })();
  return {
    answers,
    stop: async () => {
      stopped = true;
      await done;
      return answers;
    },
  };
}

describe('per-issuer signing keys on one store', () => {
  it('keys rotate against one issuer\'s folder retires only its keys; both issuers keep answering 200 with tokens that verify', async () => {
    const kidA = kidOf(tokenOf(await getToken(issuerA)));
    const kidB = kidOf(tokenOf(await getToken(issuerB)));
    expect(kidA).not.toBe(kidB);
    const askingA = keepAsking(issuerA);
    const askingB = keepAsking(issuerB);
    const rotation = JSON.parse((await issuerA.tessera(['keys', 'rotate', '--json'])).stdout) as { kid: string; retired: string[]; retained_until: string };
    expect(Object.keys(rotation).sort()).toEqual(['kid', 'retained_until', 'retired']);
    expect(rotation.retired).toEqual([kidA]);
    expect(existsSync(join(keysA, `${rotation.kid}.jwk.json`))).toBe(true);
    await expect.poll(async () => kidOf(tokenOf(await getToken(issuerA))), { timeout: 2_000, interval: 50 }).toBe(rotation.kid);
    // Issuer B has read the rotation from the log once its JWKS publishes the new key: its answers
    // up to then and beyond must all still carry its own key.
    await until(async () => (await issuerB.request('/.well-known/jwks.json')).json() as unknown as JSONWebKeySet, 'issuer B to publish the rotated key', {
      done: (jwks) => jwks.keys.some((key) => key.kid === rotation.kid),
    });
    const [fromA, fromB] = await Promise.all([askingA.stop(), askingB.stop()]);
    expect(fromA.map((a) => a.status).filter((s) => s !== 200)).toEqual([]);
    expect(fromB.map((a) => a.status).filter((s) => s !== 200)).toEqual([]);
    expect(new Set(fromB.map((a) => kidOf(tokenOf(a))))).toEqual(new Set([kidB]));
    expect((await issuerB.request('/readyz')).status).toBe(200);
    const latestA = tokenOf(await getToken(issuerA));
    const latestB = tokenOf(await getToken(issuerB));
    for (const issuer of [issuerA, issuerB]) {
      await expect.poll(() => verifies(issuer, latestA), { timeout: 2_000 }).toBe(true);
      expect(await verifies(issuer, latestB)).toBe(true);
    }
  });

  it('retiring the other issuer\'s key with --kid: it answers 503, never 500, until it has published a new key, then 200 and ready', async () => {
    const oldToken = tokenOf(await getToken(issuerB));
    const kidB = kidOf(oldToken);
    const asking = keepAsking(issuerB);
    const rotation = JSON.parse((await issuerA.tessera(['keys', 'rotate', '--kid', kidB, '--json'])).stdout) as { kid: string; retired: string[] };
    expect(rotation.retired).toContain(kidB);
    const retiredAt = Date.now();
    await expect
      .poll(() => asking.answers.some((a) => a.status === 200 && kidOf(tokenOf(a)) !== kidB), { timeout: 5_000, interval: 20 })
      .toBe(true);
    const answers = await asking.stop();
    const newKid = kidOf(tokenOf(answers.findLast((a) => a.status === 200)!));
    expect(Date.now() - retiredAt).toBeLessThan(5_000);
    expect(answers.map((a) => a.status).filter((s) => s !== 200 && s !== 503)).toEqual([]);
    for (const unavailable of answers.filter((a) => a.status === 503)) {
      expect(unavailable.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(unavailable.headers['retry-after']).toBeDefined();
    }
    // Issuer B's new key is its own: made in its folder, not the CLI's.
    expect(newKid).not.toBe(rotation.kid);
    expect(existsSync(join(keysB, `${newKid}.jwk.json`))).toBe(true);
    expect(issuerB.logs()).toMatch(new RegExp(`"kid":"${newKid}".*published a new signing key`));
    expect((await issuerB.request('/readyz')).status).toBe(200);
    const fresh = tokenOf(await getToken(issuerB));
    expect(kidOf(fresh)).toBe(newKid);
    expect(await verifies(issuerB, fresh)).toBe(true);
    // A retired key keeps verifying the tokens it signed until they expire.
    expect(await verifies(issuerB, oldToken)).toBe(true);
  });

  it('keys rotate --kid with a key that is not active is not found (exit 3) and publishes nothing', async () => {
    // Counted in the log itself: an issuer of an earlier test may still publish a replacement key meanwhile.
    const keyEvents = async () =>
      (JSON.parse((await issuerA.tessera(['audit', '--type', 'SigningKeyPublished', '--type', 'SigningKeyRetired', '--json'])).stdout) as { actor?: string }[]).filter(
        (row) => row.actor === 'cli',
      ).length;
    const before = await keyEvents();
    const refused = await issuerA.tessera(['keys', 'rotate', '--kid', 'no-such-kid']).catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: 3, stderr: expect.stringMatching(/no active signing key no-such-kid/) });
    expect(await keyEvents()).toBe(before);
  });
});
