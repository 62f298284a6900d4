import { startChild } from './children.js';
import { detectPinning, type Pinning } from './pinning.js';

/** One timed revocation: its family, when revoke answered and when the remote verifier first answered 401 (epoch ms). */
export interface ProbeSample {
  readonly family: string;
  readonly answeredAt: number;
  readonly rejectedAt: number;
}

/** What the prober child prints once it is done. */
export interface ProbeResult {
  readonly samples: readonly ProbeSample[];
  /** The CPUs the prober was allowed, read back from its own /proc entry. */
  readonly cpus: string;
  /** Requests sent to the verifier's forward-auth, warm-up included, over `seconds`. */
  readonly polls: number;
  readonly seconds: number;
  /** Time the prober's threads waited for a CPU, in % of the run. */
  readonly waitPercent?: number;
}

export type Probe = 'keep-alive' | 'new-connection';

/** Epoch milliseconds with sub-millisecond precision, comparable to another process's Date.now(). */
export const epochNow = () => performance.timeOrigin + performance.now();

/** The family id (`fid`) an access token names, read without verifying: the bench only matches messages to samples. */
export function familyOf(token: string): string {
  const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { fid?: string };
  if (!payload.fid) throw new Error('access token without fid');
  return payload.fid;
}

export interface ProbeOptions {
  readonly pairs: readonly { token: string; refresh_token: string }[];
  readonly parallel: number;
  readonly warmup: number;
  readonly pollMs: number;
  readonly probe: Probe;
  readonly home: { readonly baseUrl: string; readonly caFile: string };
  readonly remote: { readonly baseUrl: string; readonly caFile: string };
  readonly pinning?: Pinning;
}

/**
 * Runs the prober (revocation-probe-child.ts) in a process of its own, on the load generator's
 * CPU when pinning is available, and returns its samples. The pairs go to it over stdin.
 */
export async function probeInChild(options: ProbeOptions): Promise<ProbeResult> {
  const pinning = options.pinning ?? detectPinning();
  const cpuList = pinning.pinned ? pinning.loadGeneratorCpus : undefined;
  const child = await startChild<ProbeResult>('revocation-probe-child.ts', {
    env: {
      BENCH_PROBE_PARALLEL: String(options.parallel),
      BENCH_PROBE_WARMUP: String(options.warmup),
      BENCH_PROBE_POLL_MS: String(options.pollMs),
      BENCH_PROBE: options.probe,
      BENCH_HOME_URL: options.home.baseUrl,
      BENCH_HOME_CA: options.home.caFile,
      BENCH_REMOTE_URL: options.remote.baseUrl,
      BENCH_REMOTE_CA: options.remote.caFile,
    },
    nodeFlags: ['--conditions=tessera-source'],
    stdin: JSON.stringify({ pairs: options.pairs }),
    // The child prints once every revocation is timed: bounded by 10 s each (its own deadline), not by startChild's minute.
    timeoutMs: 60_000 + options.pairs.length * 1_000,
    forwardStderr: true,
    ...(cpuList === undefined ? {} : { cpuList }),
  });
  await child.stop();
  return child.ready;
}
