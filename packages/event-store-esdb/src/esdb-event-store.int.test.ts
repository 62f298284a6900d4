import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eventStoreContract } from '@tessera/event-store/contract';
import { EsdbEventStore } from './esdb-event-store.js';
import { EsdbLogRetention } from './esdb-log-retention.js';
import { systemClock } from '@tessera/timing';

/**
 * Runs the shared contract against a real EventStoreDB: TESSERA_ESDB_URL when set, else a
 * throw-away container started with the docker CLI. Without either the suite is skipped, and
 * says so loudly: a green run here must never be mistaken for a tested ESDB adapter.
 *
 * The docker CLI rather than testcontainers: testcontainers pulls in dockerode → ssh2 with
 * native optional builds (cpu-features) for one container we can start in three commands.
 */

const image = process.env.TESSERA_ESDB_IMAGE ?? 'eventstore/eventstore:24.10';
const execFileAsync = promisify(execFile);

type Target = { kind: 'url'; url: string } | { kind: 'docker' } | { kind: 'none'; why: string };

async function dockerAnswers(): Promise<string | undefined> {
  const host = process.env.DOCKER_HOST;
  const socketPath = host?.startsWith('unix://') ? host.slice('unix://'.length) : host ? undefined : '/var/run/docker.sock';
  if (host && !socketPath) return undefined; // tcp:// engines: trust the CLI to reach them
  if (!socketPath || !existsSync(socketPath)) return `no Docker socket at ${socketPath ?? host}`;
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200 ? undefined : `Docker engine answered /_ping with ${res.statusCode}`);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (error) => resolve(`Docker socket ${socketPath} does not answer (${error.message})`));
    req.end();
  });
}

async function findTarget(): Promise<Target> {
  const url = process.env.TESSERA_ESDB_URL;
  if (url) return { kind: 'url', url };
  const engineProblem = await dockerAnswers();
  if (engineProblem) return { kind: 'none', why: `${engineProblem} and TESSERA_ESDB_URL is not set` };
  try {
    await execFileAsync('docker', ['version', '--format', '{{.Server.Version}}'], { timeout: 10_000 });
  } catch (error) {
    return { kind: 'none', why: `the docker CLI cannot reach an engine (${(error as Error).message.split('\n')[0]}) and TESSERA_ESDB_URL is not set` };
  }
  return { kind: 'docker' };
}

const target = await findTarget();
/** On a machine that has a server, a missing one must fail the run rather than skip it (as TESSERA_REQUIRE_KAFKA does). */
const required = process.env.TESSERA_REQUIRE_ESDB === '1';
if (target.kind === 'none' && !required) {
  console.warn(
    [
      '',
      '!!! EventStoreDB contract suite SKIPPED — the ESDB adapter is NOT tested in this run.',
      `!!! Why: ${target.why}.`,
      '!!! Run it with TESSERA_ESDB_URL=esdb://host:2113?tls=false, or on a machine with a Docker engine;',
      '!!! TESSERA_REQUIRE_ESDB=1 turns this skip into a failure.',
      '',
    ].join('\n'),
  );
}

async function startContainer(): Promise<{ url: string; stop: () => Promise<void> }> {
  const { stdout } = await execFileAsync(
    'docker',
    [
      'run', '--detach', '--rm',
      '--publish', '127.0.0.1::2113',
      '--env', 'EVENTSTORE_INSECURE=true',
      '--env', 'EVENTSTORE_CLUSTER_SIZE=1',
      '--env', 'EVENTSTORE_RUN_PROJECTIONS=None',
      '--env', 'EVENTSTORE_MEM_DB=true',
      image,
    ],
    { timeout: 300_000 },
  );
  const id = stdout.trim();
  const stop = async () => {
    await execFileAsync('docker', ['rm', '--force', id], { timeout: 60_000 }).catch(() => undefined);
  };
  try {
    const { stdout: port } = await execFileAsync('docker', ['port', id, '2113/tcp'], { timeout: 10_000 });
    const hostPort = port.trim().split('\n')[0]?.split(':').pop();
    if (!hostPort) throw new Error(`no published port for 2113 in ${JSON.stringify(port)}`);
    return { url: `esdb://127.0.0.1:${hostPort}?tls=false`, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A node answers gRPC before it has elected itself leader; wait until reads and writes work. */
async function waitUntilUsable(store: EsdbEventStore, deadlineMs: number): Promise<void> {
  let lastError: unknown;
  while (systemClock.now() < deadlineMs) {
    try {
      await store.headPosition();
      return;
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  throw new Error('EventStoreDB did not become usable in time', { cause: lastError });
}

describe.runIf(target.kind === 'none' && required)('EventStoreDB adapter (TESSERA_REQUIRE_ESDB=1)', () => {
  it('has a server to run the contract against', () => {
    throw new Error(`TESSERA_REQUIRE_ESDB=1 but ${target.kind === 'none' ? target.why : 'no server'}`);
  });
});

describe.skipIf(target.kind === 'none')('EventStoreDB adapter', () => {
  eventStoreContract('EventStoreDB', async () => {
    const server = target.kind === 'url' ? { url: target.url, stop: async () => undefined } : await startContainer();
    const store = new EsdbEventStore({ connectionString: server.url });
    try {
      await waitUntilUsable(store, systemClock.now() + 90_000);
    } catch (error) {
      await store.close();
      await server.stop();
      throw error;
    }
    return {
      store,
      openAnother: async () => new EsdbEventStore({ connectionString: server.url }),
      teardown: async () => {
        await store.close();
        await server.stop();
      },
    };
  });
});

describe.skipIf(target.kind === 'none')('EventStoreDB retention ($tb)', () => {
  it('truncates a closed family whole, and a rolling stream before the revision it keeps', async () => {
    const server = target.kind === 'url' ? { url: target.url, stop: async () => undefined } : await startContainer();
    const store = new EsdbEventStore({ connectionString: server.url });
    const retention = new EsdbLogRetention({ connectionString: server.url });
    try {
      await waitUntilUsable(store, systemClock.now() + 90_000);
      const id = randomUUID();
      const registered = (n: number) => ({ event: { type: 'AccountRegistered' as const, v: 1 as const, accountId: `${id}-${n}`, name: 'n', permissions: [], at: n } });
      const family = `tokenfamily-${id}`;
      const rolling = `legacytokens-${id}`;
      await store.append(family, [registered(1), registered(2)], { expectedRevision: 'no_stream' });
      await store.append(rolling, [registered(1), registered(2), registered(3)], { expectedRevision: 'no_stream' });
      await retention.remove([
        { stream: family, positions: [], truncateBefore: 2n },
        { stream: rolling, positions: [], truncateBefore: 2n },
      ]);
      expect(await store.readStream(family)).toEqual([]);
      expect((await store.readStream(rolling)).map((event) => event.revision)).toEqual([2n]);
      // The stream's revisions go on from where they were: the next append is revision 3.
      const next = await store.append(rolling, [registered(4)], { expectedRevision: 2n });
      expect(next.nextExpectedRevision).toBe(3n);
    } finally {
      await retention.close();
      await store.close();
      await server.stop();
    }
  }, 180_000);
});
