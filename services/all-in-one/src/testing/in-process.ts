import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '@tessera/config';
import { holdingDeliveries, type HeldDeliveries } from '@tessera/event-store/testing';
import { SqliteEventStore } from '@tessera/event-store-sqlite';
import { ssfStreams } from '@tessera/events';
import { createHost, type Host } from '@tessera/host';
import { buildApps } from '@tessera/server';
import type { Clock, Scheduler } from '@tessera/timing';
import { createHashingKey, createSecretHasher, readHashingKeys, type SecretHasher } from '@tessera/tokens';
import { composeAllInOne } from '../all-in-one-composition.js';

/** The all-in-one as `tessera start` wires it, in this process: requests go in with inject(). */
export interface InProcessAllInOne {
  readonly host: Host;
  /** The public listener's app (v5 and v1 on one listener). */
  readonly app: FastifyInstance;
  /** The admin listener's app: /metrics, the health probes and /admin/v1/*. */
  readonly admin: FastifyInstance;
  /** The store the process runs on (SQLite in its data folder), whose deliveries to read models a test can hold. */
  readonly store: HeldDeliveries;
  /** The process's secret-hashing key (the one it recorded on the log), for writing accounts with known secrets. */
  readonly hasher: SecretHasher;
  readonly dataDir: string;
  /** Set when a read model failed (the process would have stopped). */
  readonly fatal: () => unknown;
  /**
   * Resolves once the process's read models (keys, accounts, admin tokens) and its audit index
   * have applied the log up to its head, as /metrics tells an operator
   * (tessera_projection_last_applied_position, tessera_audit_index_position).
   */
  caughtUp(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Runs composeAllInOne on a real host (a temporary data folder, SQLite in it) and builds its
 * listeners' apps without listening: the wiring users run, fast enough for unit tests. `prepare`
 * may lay down a log first (in `<data folder>/events.db`), as a long-running deployment has one.
 * A test of what time drives gives a ManualClock as `clock` and a ManualScheduler on it as
 * `scheduler`, and moves them instead of sleeping.
 */
export async function startInProcess(
  options: {
    readonly env?: Record<string, string>;
    readonly clock?: Clock;
    readonly scheduler?: Scheduler;
    readonly prepare?: (dataDir: string) => void;
    /** The data folder of an earlier run, to start again on it (a restart); by default a new one. */
    readonly dataDir?: string;
    /** Leave the data folder in place on close, for a later run to start on. */
    readonly keepData?: boolean;
  } = {},
): Promise<InProcessAllInOne> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'tessera-in-process-'));
  if (options.prepare) {
    // A deployment with a history has its secret-hashing key: a server on a log without one refuses to start.
    createHashingKey(dataDir);
    options.prepare(dataDir);
  }
  const config = loadConfig({ TESSERA_DATA_DIR: dataDir, TESSERA_LOG_LEVEL: 'silent', ...options.env }, { role: 'all-in-one' });
  // The file the factory would open: the audit index's thread opens it too, read-only.
  const store = holdingDeliveries(new SqliteEventStore({ file: join(dataDir, 'events.db'), ...(options.clock ? { clock: options.clock } : {}) }));
  let failure: unknown;
  const hostProcess = createHost(config, {
    role: 'all-in-one',
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.scheduler ? { scheduler: options.scheduler } : {}),
    openEventStore: async () => store,
    onFatal: (error) => (failure = error),
  });
  const { host } = hostProcess;
  const apps = await buildApps(host, await composeAllInOne(host));
  await hostProcess.whenReady();
  const hashingKey = readHashingKeys(dataDir).inUse;
  if (!hashingKey) throw new Error('the all-in-one became ready without a secret-hashing key');
  return {
    host,
    app: apps.public[0]!,
    admin: apps.admin!,
    store,
    hasher: createSecretHasher(hashingKey.key),
    dataDir,
    fatal: () => failure,
    caughtUp: async () => {
      // The delivery lease's own events (renewals, checkpoints) are followed by no read model, and
      // the projection's position counts only the events it follows: the head they must reach is
      // the newest event before the lease's latest ones.
      const leaseEvents = new Set((await store.readStream(ssfStreams.delivery(), { direction: 'backwards', maxCount: 100 })).map(({ position }) => position));
      let newest = (await store.headPosition()) ?? 0n;
      while (newest > 0n && leaseEvents.has(newest)) newest -= 1n;
      const head = Number(newest);
      // A long log takes the audit index's thread a while (about 5 s per 100,000 events here).
      for (const deadline = performance.now() + 120_000; performance.now() < deadline; ) {
        const metrics = (await apps.admin!.inject({ method: 'GET', url: '/metrics' })).body;
        const gauge = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(metrics)?.[1] ?? -1);
        if (gauge('tessera_projection_last_applied_position') >= head && gauge('tessera_audit_index_position') >= head) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`the read models did not reach position ${head}`);
    },
    close: async () => {
      store.release();
      await hostProcess.close();
      if (!options.keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
