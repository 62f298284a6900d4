import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaFeed, silentLogger } from '@tessera/feed';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { startKafkaBroker } from '../../infra/kafka/kafka-broker.js';
import { startCoordinatorLoadingProxy } from '../support/coordinator-loading-proxy.js';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/**
 * `tessera verifier` fed from Kafka, started while the group coordinator is loading. A fresh broker
 * creates __consumer_offsets on the first group request and then loads it, answering meanwhile that
 * the coordinator is not available or is loading; a broker start and a coordinator moving do the
 * same. Such a verifier used to exit at start (kafkajs restarted its consumer, and the feed called
 * what followed a refusal): 3 of 30 starts on fresh brokers on a 2-core machine, more when it is
 * busy. It must wait, 503 on /readyz naming Kafka, and be ready once the group joins.
 *
 * First the state held on purpose (a proxy answers "loading" until told to stop), then ten fresh
 * brokers as they come, because one fresh start proves little either way.
 */
const { controllable } = kafkaTestEnvironment('Kafka-fed verifiers started on fresh brokers', 'own-broker');
const starts = 10;
// Three brokers start side by side: a JVM's start is partly waiting, and two cores take three.
const sideBySide = 3;

interface Outcome {
  readonly start: number;
  /** Why the verifier never became ready (its exit, with the line that says why), or undefined. */
  readonly notReady?: string;
  /** Ready, and then refused the revoked token while accepting a live one. */
  readonly rejectsRevoked?: boolean;
  readonly readyMs?: number;
  /** The verifier met the coordinator loading (or not available yet) and waited for it. */
  readonly waitedForCoordinator?: boolean;
}

describe.skipIf(!controllable)('a Kafka-fed verifier started on a fresh broker', () => {
  let home: TesseraProcess;
  let revoked: string;
  let live: string;

  beforeAll(async () => {
    // Home issues and revokes, with no Kafka of its own.
    home = await startTessera({});
    const account = await home.createAccount();
    const pair = async () =>
      (await home.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).json() as {
        token: string;
        refresh_token: string;
      };
    const first = await pair();
    expect((await home.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: first.refresh_token })).status).toBe(200);
    revoked = first.token;
    live = (await pair()).token;
  });
  afterAll(async () => {
    await home?.stop();
  });

  const charge = (verifier: TesseraProcess, token: string) =>
    verifier.request('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{}' });
  // Home's log reaches each broker through a `tessera relay` of its own (its own data folder, so its own checkpoint).
  const startRelay = (brokers: string) => startTessera({ TESSERA_KAFKA_BROKERS: brokers, TESSERA_EVENT_STORE: `sqlite:${join(home.dataDir, 'events.db')}` }, { command: 'relay' });
  const startVerifier = (brokers: string, until: 'ready' | 'listening' = 'ready') =>
    startTessera(
      {
        TESSERA_KAFKA_BROKERS: brokers,
        TESSERA_VERIFIER_SOURCE: 'kafka',
        TESSERA_ISSUER_JWKS_URL: `${home.baseUrl}/.well-known/jwks.json`,
        NODE_EXTRA_CA_CERTS: join(home.dataDir, 'tls', 'self-signed.crt'),
        TESSERA_EVENT_STORE: 'sqlite:/nonexistent/must-not-be-opened.db',
      },
      { command: 'verifier', until },
    );
  /** The topic first (no group is involved in making it): the verifier's first try then reaches the group coordinator. */
  const makeTopic = async (brokers: string) => {
    const feed = createKafkaFeed({ brokers, logger: silentLogger });
    await feed.ensureTopic();
    await feed.close();
  };

  it('waits while the coordinator answers "loading", 503 on /readyz naming Kafka, and is ready once the group joins', { timeout: 90_000 }, async () => {
    const proxy = await startCoordinatorLoadingProxy();
    const broker = await startKafkaBroker({ remoteListener: { advertisedPort: proxy.port } });
    proxy.target = broker.remotePort;
    const processes: TesseraProcess[] = [];
    try {
      await makeTopic(broker.bootstrap);
      processes.push(await startRelay(broker.bootstrap));
      const verifier = await startVerifier(`127.0.0.1:${proxy.port}`, 'listening');
      processes.push(verifier);
      let exit: number | null | undefined;
      void verifier.exited.then((code) => (exit = code));
      // A verifier that exits says why here, rather than as a refused connection.
      const readyz = async () => {
        if (exit !== undefined) throw new Error(`the verifier exited (${exit}):\n${verifier.logs()}`);
        return verifier.adminRequest('/readyz');
      };
      await expect.poll(async () => (await readyz()).text, { timeout: 20_000, interval: 100 }).toContain('the group coordinator is loading or moving');
      // Still waiting after several tries (kafkajs' join, then the verifier's own every 2 s): no exit, no refusal.
      await expect.poll(() => proxy.loadingAnswers, { timeout: 20_000, interval: 100 }).toBeGreaterThanOrEqual(3);
      const waiting = await readyz();
      expect(waiting.status).toBe(503);
      expect(waiting.text).toContain('waiting for Kafka');
      expect((await charge(verifier, live)).status).toBe(503);

      proxy.loading = false;
      await expect.poll(async () => (await readyz()).status, { timeout: 20_000, interval: 100 }).toBe(200);
      await expect.poll(async () => (await charge(verifier, revoked)).status, { timeout: 10_000, interval: 100 }).toBe(401);
      expect((await charge(verifier, live)).status).toBe(200);
    } finally {
      await Promise.all(processes.map((child) => child.stop()));
      await broker.destroy();
      await proxy.close();
    }
  });

  async function startOnFreshBroker(start: number): Promise<Outcome> {
    const broker = await startKafkaBroker();
    const processes: TesseraProcess[] = [];
    try {
      await makeTopic(broker.bootstrap);
      const began = Date.now();
      // Both at once: the verifier's group is the first the broker hears of.
      const [relay, verifier] = await Promise.allSettled([startRelay(broker.bootstrap), startVerifier(broker.bootstrap)]);
      for (const started of [relay, verifier]) if (started.status === 'fulfilled') processes.push(started.value);
      if (relay.status === 'rejected') throw relay.reason;
      if (verifier.status === 'rejected') {
        const message = verifier.reason instanceof Error ? verifier.reason.message : String(verifier.reason);
        const why = /Kafka refused[^\n"]*/.exec(message)?.[0] ?? message.split('\n').slice(0, 3).join(' | ');
        return { start, notReady: why };
      }
      const readyMs = Date.now() - began;
      // The relay may still be publishing: the revocation arrives within moments, live or in the rebuild.
      const refused = await until(async () => (await charge(verifier.value, revoked)).status, 'the revoked token refused', { done: (status) => status === 401 }).then(
        () => true,
        () => false,
      );
      const waitedForCoordinator = verifier.value.logs().includes('the group coordinator is loading or moving');
      return { start, rejectsRevoked: refused && (await charge(verifier.value, live)).status === 200, readyMs, waitedForCoordinator };
    } finally {
      await Promise.all(processes.map((child) => child.stop()));
      await broker.destroy();
    }
  }

  it(`becomes ready and rejects a revoked token on each of ${starts} fresh brokers`, { timeout: 240_000 }, async () => {
    const began = Date.now();
    const outcomes: Outcome[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: sideBySide }, async () => {
        while (next < starts) {
          const start = next;
          next += 1;
          outcomes.push(await startOnFreshBroker(start));
        }
      }),
    );
    const ready = outcomes.filter((outcome) => outcome.notReady === undefined);
    console.info(
      `[kafka] ${ready.length} of ${starts} verifiers on fresh brokers ready (${ready.map((outcome) => outcome.readyMs).join(', ')} ms) in ${Date.now() - began} ms, ` +
        `${ready.filter((outcome) => outcome.waitedForCoordinator).length} after waiting for the group coordinator; ` +
        `not ready: ${outcomes.filter((outcome) => outcome.notReady !== undefined).map((outcome) => `#${outcome.start} ${outcome.notReady}`).join('; ') || 'none'}`,
    );
    expect(outcomes.filter((outcome) => outcome.notReady !== undefined || outcome.rejectsRevoked !== true).sort((a, b) => a.start - b.start)).toEqual([]);
  });
});
