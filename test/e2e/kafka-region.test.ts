import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaFeed } from '@tessera/feed';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Revocations through a real broker: the all-in-one runs the relay in-process, and a
 * verifier in "another region" — its own process and data folder, no access to the event
 * log — learns keys from the issuer's JWKS and revocations from Kafka alone.
 */
const { brokers } = kafkaTestEnvironment('Kafka-fed verifier e2e');
const topic = `tessera.revocations.e2e.${process.pid}.${Date.now()}`;

describe.skipIf(!brokers)('a verifier fed only by Kafka and the JWKS', () => {
  let home: TesseraProcess;
  let remote: TesseraProcess;
  let account: Credentials;

  beforeAll(async () => {
    home = await startTessera({ TESSERA_KAFKA_BROKERS: brokers!, TESSERA_KAFKA_TOPIC: topic });
    account = await home.createAccount();
    remote = await startTessera(
      {
        TESSERA_KAFKA_BROKERS: brokers!,
        TESSERA_KAFKA_TOPIC: topic,
        TESSERA_VERIFIER_SOURCE: 'kafka',
        TESSERA_ISSUER_JWKS_URL: `${home.baseUrl}/.well-known/jwks.json`,
        // The home server's self-signed certificate, trusted by file like a private CA.
        NODE_EXTRA_CA_CERTS: join(home.dataDir, 'tls', 'self-signed.crt'),
        TESSERA_EVENT_STORE: 'sqlite:/nonexistent/must-not-be-opened.db',
      },
      { command: 'verifier' },
    );
  });
  afterAll(async () => {
    await remote?.stop();
    await home?.stop();
  });

  const pair = async () =>
    (
      await home.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })
    ).json() as { token: string; refresh_token: string };
  const chargeAt = (server: TesseraProcess, token: string) =>
    server.request('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{}' });

  it('accepts a token issued at home, and rejects it once it is revoked at home', async () => {
    const { token, refresh_token } = await pair();
    expect((await chargeAt(remote, token)).status).toBe(200);
    expect((await home.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token })).status).toBe(200);
    expect((await chargeAt(home, token)).status).toBe(401);
    await expect.poll(async () => (await chargeAt(remote, token)).status, { timeout: 5_000, interval: 20 }).toBe(401);
  });

  it('rejects the old access token after a refresh at home, and accepts the new one', async () => {
    const first = await pair();
    const next = (await home.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: first.refresh_token })).json() as { token: string };
    await expect.poll(async () => (await chargeAt(remote, first.token)).status, { timeout: 5_000, interval: 20 }).toBe(401);
    expect((await chargeAt(remote, next.token)).status).toBe(200);
  });

  it('serves forward-auth from the Kafka-fed projection, and has no issuer routes', async () => {
    const { token } = await pair();
    const allowed = await remote.request('/forward-auth?permission=transaction:charge', { headers: { authorization: `Bearer ${token}` } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers['x-tessera-subject']).toBe(account.account_id);
    const issue = await remote.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
    expect(issue.status).toBe(404);
  });

  it('the relay reports its lag on /metrics at home (admin listener)', async () => {
    const metrics = await home.adminRequest('/metrics');
    expect(metrics.text).toMatch(/^tessera_relay_published_total \d+/m);
    expect(metrics.text).toMatch(/^tessera_relay_pending_events \d+/m);
  });

  it('npx tessera relay runs on its own, from its own checkpoint, and reports ready and lag', async () => {
    const relay = await startTessera(
      { TESSERA_KAFKA_BROKERS: brokers!, TESSERA_KAFKA_TOPIC: `${topic}.standalone`, TESSERA_EVENT_STORE: `sqlite:${join(home.dataDir, 'events.db')}` },
      { command: 'relay' },
    );
    try {
      expect((await relay.request('/readyz')).status).toBe(200);
      await expect
        .poll(async () => Number((await relay.adminRequest('/metrics')).text.match(/^tessera_relay_published_total (\d+)/m)?.[1] ?? 0), { timeout: 5_000 })
        .toBeGreaterThan(0);
      expect((await relay.request('/v5/Transaction/charge', { method: 'POST' })).status).toBe(404);
    } finally {
      await relay.stop();
    }
  });
  // Last: it rotates home's signing key.
  it('a token signed by a key rotated in a moment ago is accepted: the verifier looks at the JWKS before refusing an unknown kid', async () => {
    // This verifier's topic carries nothing, so the new key can reach it only through the JWKS.
    const quietTopic = `${topic}.quiet`;
    const feed = createKafkaFeed({ brokers: brokers!, topic: quietTopic });
    await feed.ensureTopic();
    await feed.close();
    const isolated = await startTessera(
      {
        TESSERA_KAFKA_BROKERS: brokers!,
        TESSERA_KAFKA_TOPIC: quietTopic,
        TESSERA_VERIFIER_SOURCE: 'kafka',
        TESSERA_ISSUER_JWKS_URL: `${home.baseUrl}/.well-known/jwks.json`,
        NODE_EXTRA_CA_CERTS: join(home.dataDir, 'tls', 'self-signed.crt'),
        TESSERA_EVENT_STORE: 'sqlite:/nonexistent/must-not-be-opened.db',
      },
      { command: 'verifier' },
    );
    try {
      const rotated = JSON.parse((await home.tessera(['keys', 'rotate', '--json'])).stdout) as { kid: string };
      const kidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;
      // Home's issuer learns the new key from its log within moments; wait for a token it signed.
      let token = '';
      await expect
        .poll(async () => {
          token = (await pair()).token;
          return kidOf(token);
        }, { timeout: 5_000, interval: 50 })
        .toBe(rotated.kid);
      expect((await chargeAt(isolated, token)).status).toBe(200);
      // A kid nobody published stays refused.
      const [, payload, signature] = token.split('.');
      const forged = `${Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid: 'no-such-key' })).toString('base64url')}.${payload}.${signature}`;
      expect((await chargeAt(isolated, forged)).status).toBe(401);
    } finally {
      await isolated.stop();
    }
  });

  it('a Kafka-fed verifier started before its topic exists waits, says why on /readyz, answers 503 meanwhile, and serves once the topic is made', async () => {
    const lateTopic = `${topic}.late`;
    const late = await startTessera(
      {
        TESSERA_KAFKA_BROKERS: brokers!,
        TESSERA_KAFKA_TOPIC: lateTopic,
        TESSERA_VERIFIER_SOURCE: 'kafka',
        // Keys are known from the JWKS at once; revocations are not until the topic is read.
        TESSERA_ISSUER_JWKS_URL: `${home.baseUrl}/.well-known/jwks.json`,
        NODE_EXTRA_CA_CERTS: join(home.dataDir, 'tls', 'self-signed.crt'),
        TESSERA_EVENT_STORE: 'sqlite:/nonexistent/must-not-be-opened.db',
      },
      { command: 'verifier', until: 'listening' },
    );
    try {
      await expect.poll(async () => (await late.adminRequest('/readyz')).text, { timeout: 10_000, interval: 100 }).toContain('waiting for Kafka');
      expect((await late.adminRequest('/readyz')).status).toBe(503);
      const { token } = await pair();
      expect((await chargeAt(home, token)).status).toBe(200);
      // Not started yet: protected routes answer 503, as every route of a process that was never ready.
      expect((await chargeAt(late, token)).status).toBe(503);
      const feed = createKafkaFeed({ brokers: brokers!, topic: lateTopic });
      await feed.ensureTopic();
      await feed.close();
      await expect.poll(async () => (await late.adminRequest('/readyz')).status, { timeout: 20_000, interval: 200 }).toBe(200);
      expect((await chargeAt(late, token)).status).toBe(200);
    } finally {
      await late.stop();
    }
  });
});
