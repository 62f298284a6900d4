import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantAcls, securedKafkaEnvironment } from '@tessera/feed/testing';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Kafka secured the way production runs it, configured only through TESSERA_KAFKA_*: the
 * all-in-one's relay publishes over SASL_SSL (SCRAM-SHA-512) as a user allowed to write the topic,
 * and a Kafka-fed verifier reads it over SASL_SSL (SCRAM-SHA-256) as a user allowed only to read.
 * A revocation made at the issuer is refused by the verifier, which has no access to the log.
 */
const secured = securedKafkaEnvironment('Kafka security through tessera start and tessera verifier');
const topic = `tessera.revocations.secured-e2e.${process.pid}`;

describe.skipIf(!secured)('tessera start and a Kafka-fed verifier over SASL_SSL', () => {
  let home: TesseraProcess;
  let remote: TesseraProcess;
  let account: Credentials;

  beforeAll(async () => {
    const { relay, verifier } = secured!.users;
    await grantAcls(secured!, [
      { principal: `User:${relay!.username}`, resource: 'topic', name: topic, operations: ['WRITE', 'DESCRIBE', 'CREATE', 'DESCRIBE_CONFIGS'] },
      { principal: `User:${verifier!.username}`, resource: 'topic', name: topic, operations: ['READ', 'DESCRIBE'] },
      { principal: `User:${verifier!.username}`, resource: 'group', name: 'tessera-', prefixed: true, operations: ['READ', 'DESCRIBE'] },
    ]);
    home = await startTessera({
      TESSERA_KAFKA_BROKERS: secured!.saslSslBootstrap,
      TESSERA_KAFKA_TOPIC: topic,
      TESSERA_KAFKA_TLS_CA_FILE: secured!.caFile,
      TESSERA_KAFKA_SASL_MECHANISM: 'scram-sha-512',
      TESSERA_KAFKA_SASL_USERNAME: relay!.username,
      TESSERA_KAFKA_SASL_PASSWORD_FILE: relay!.passwordFile,
    });
    account = await home.createAccount();
    remote = await startTessera(
      {
        TESSERA_KAFKA_BROKERS: secured!.saslSslBootstrap,
        TESSERA_KAFKA_TOPIC: topic,
        TESSERA_KAFKA_TLS_CA_FILE: secured!.caFile,
        TESSERA_KAFKA_SASL_MECHANISM: 'scram-sha-256',
        TESSERA_KAFKA_SASL_USERNAME: verifier!.username,
        TESSERA_KAFKA_SASL_PASSWORD_FILE: verifier!.passwordFile,
        TESSERA_VERIFIER_SOURCE: 'kafka',
        TESSERA_ISSUER_JWKS_URL: `${home.baseUrl}/.well-known/jwks.json`,
        NODE_EXTRA_CA_CERTS: join(home.dataDir, 'tls', 'self-signed.crt'),
      },
      { command: 'verifier' },
    );
  });
  afterAll(async () => {
    await remote?.stop();
    await home?.stop();
  });

  it('a revocation at the issuer reaches the verifier through the secured topic, and no secret reaches either log', async () => {
    const pair = (await home.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).json() as {
      token: string;
      refresh_token: string;
    };
    const charge = () => remote.request('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${pair.token}` }, body: '{}' });
    expect((await charge()).status).toBe(200);
    expect((await home.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: pair.refresh_token })).status).toBe(200);
    await expect.poll(async () => (await charge()).status, { timeout: 10_000, interval: 50 }).toBe(401);
    const metrics = (await home.adminRequest('/metrics')).text;
    expect(Number(/^tessera_relay_pending_events (\d+)/m.exec(metrics)?.[1])).toBe(0);
    for (const log of [home.logs(), remote.logs()]) {
      for (const user of Object.values(secured!.users)) expect(log).not.toContain(user.password);
    }
  });
});

describe.skipIf(!secured)('a relay whose Kafka password is wrong', () => {
  it('keeps issuing (Kafka is not the issuer\'s dependency), publishes nothing, and says why without the password', async () => {
    const wrong = await startTessera({
      TESSERA_KAFKA_BROKERS: secured!.saslSslBootstrap,
      TESSERA_KAFKA_TOPIC: `${topic}.wrong`,
      TESSERA_KAFKA_TLS_CA_FILE: secured!.caFile,
      TESSERA_KAFKA_SASL_MECHANISM: 'scram-sha-512',
      TESSERA_KAFKA_SASL_USERNAME: secured!.users.relay!.username,
      TESSERA_KAFKA_SASL_PASSWORD: 'not-the-password',
    });
    try {
      const account = await wrong.createAccount();
      expect((await wrong.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).status).toBe(200);
      await expect.poll(() => wrong.logs(), { timeout: 10_000 }).toMatch(/relay could not reach the feed to ready its topic; retrying/);
      expect(wrong.logs()).not.toContain('not-the-password');
    } finally {
      await wrong.stop();
    }
  });
});
