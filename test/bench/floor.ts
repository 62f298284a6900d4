import Database from 'better-sqlite3';
import { join } from 'node:path';
import { startChild } from './children.js';
import { measureCpuPerOperation, processCpuSeconds, type CpuPerOperation, type CpuRunOptions } from './cpu-time.js';
import { load, warmUp, type LoadOptions, type LoadResult } from './load.js';

/**
 * The floor of a durable issuance on this machine, each part alone (floor-child.ts): a TLS
 * request/response with no work behind it, one ES256 signature, one durable group commit. What
 * Tessera spends per issuance above their sum is the part that is neither TLS, nor the
 * signature, nor the commit.
 */
export interface FloorResult {
  /**
   * cpu: at the fixed rate, requests one by one; cpuMicrosAtLoad: over the full-load run, where each
   * wake of the server reads and answers several: the floor of an issuance at full load takes this one.
   */
  readonly tls: { readonly bodyBytes: number; readonly load: LoadResult; readonly cpu: CpuPerOperation; readonly cpuMicrosAtLoad: number };
  readonly sign: { readonly signatures: number; readonly wallMicrosPerSign: number; readonly cpuMicrosPerSign: number };
  readonly commit: readonly CommitFloor[];
}

export interface CommitFloor {
  readonly groupSize: number;
  readonly commits: number;
  readonly wallMicrosPerCommit: number;
  readonly wallMicrosPerEvent: number;
  readonly cpuMicrosPerEvent: number;
}

/** The newest TokenIssued of a live Tessera log and its metadata: the commit floor appends copies of it. */
export function tokenIssuedTemplate(dataDir: string): { event: unknown; metadata: unknown } {
  const db = new Database(join(dataDir, 'events.db'), { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare<[], { payload: string; metadata: string }>("SELECT payload, metadata FROM events WHERE type = 'TokenIssued' ORDER BY position DESC LIMIT 1").get();
    if (!row) throw new Error('no TokenIssued event in the log to copy');
    return { event: JSON.parse(row.payload) as unknown, metadata: JSON.parse(row.metadata) as unknown };
  } finally {
    db.close();
  }
}

export async function measureFloor(options: {
  tlsFiles: { cert: string; key: string };
  cpuList?: string;
  /** A real get-oauth-token answer body: the TLS floor answers bytes of the same size. */
  tokenAnswer: string;
  template: { event: unknown; metadata: unknown };
  groupSizes: readonly number[];
  load: LoadOptions & { warmupSeconds: number };
  cpu: CpuRunOptions;
}): Promise<FloorResult> {
  const pinned = options.cpuList !== undefined ? { cpuList: options.cpuList } : {};
  const tlsServer = await startChild<{ port: number }>('floor-child.ts', {
    env: { BENCH_FLOOR: 'tls', BENCH_TLS_CERT: options.tlsFiles.cert, BENCH_TLS_KEY: options.tlsFiles.key, BENCH_TLS_BODY: options.tokenAnswer },
    ...pinned,
  });
  let tls: FloorResult['tls'];
  try {
    // The same request shape as get-oauth-token: a small JSON body by POST.
    const target = {
      url: `https://127.0.0.1:${tlsServer.ready.port}/v5/Authorization/get-oauth-token`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_login_id: 'tsl_AbCdEfGhIjKl', transaction_key: `tsk_${'x'.repeat(43)}` }),
    };
    await warmUp(target, { seconds: options.load.warmupSeconds, connections: options.load.connections });
    const before = processCpuSeconds(tlsServer.process.pid!);
    const measured = await load(target, options.load);
    const cpuMicrosAtLoad = ((processCpuSeconds(tlsServer.process.pid!) - before) / (measured.reqPerSec * measured.seconds)) * 1e6;
    const cpu = await measureCpuPerOperation(target, tlsServer.process.pid!, options.cpu);
    tls = { bodyBytes: Buffer.byteLength(options.tokenAnswer), load: measured, cpu, cpuMicrosAtLoad };
  } finally {
    await tlsServer.stop();
  }
  const signer = await startChild<FloorResult['sign']>('floor-child.ts', { env: { BENCH_FLOOR: 'sign' }, ...pinned });
  await signer.stop();
  const commit: CommitFloor[] = [];
  for (const groupSize of options.groupSizes) {
    const committer = await startChild<CommitFloor>('floor-child.ts', {
      env: { BENCH_FLOOR: 'commit', BENCH_GROUP_SIZE: String(groupSize), BENCH_EVENT_TEMPLATE: JSON.stringify(options.template) },
      ...pinned,
    });
    await committer.stop();
    commit.push(committer.ready);
  }
  return { tls, sign: signer.ready, commit };
}

export function describeFloor(floor: FloorResult): string {
  const commits = floor.commit
    .map((c) => `group of ${c.groupSize}: ${c.wallMicrosPerCommit.toFixed(0)} µs per commit, ${c.wallMicrosPerEvent.toFixed(0)} µs wall and ${c.cpuMicrosPerEvent.toFixed(0)} µs CPU per event`)
    .join('; ');
  return (
    `floor, each alone: TLS request/response (bare node:https, ${floor.tls.bodyBytes}-byte answer) ${floor.tls.load.reqPerSec.toFixed(0)} req/s at ${floor.tls.load.connections} connections, ` +
    `${floor.tls.cpuMicrosAtLoad.toFixed(0)} µs server CPU per request there, ${floor.tls.cpu.microsPerOperation.toFixed(0)} at ${floor.tls.cpu.offeredRate} req/s; ` +
    `ES256 sign ${floor.sign.cpuMicrosPerSign.toFixed(1)} µs CPU per signature; durable commit (SqliteEventStore, synchronous=FULL) ${commits}`
  );
}
