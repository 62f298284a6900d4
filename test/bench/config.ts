/** Bench settings from the environment, parsed once; a bad value stops the bench naming it. */
function positive(name: string, fallback: number, options: { integer?: boolean; max?: number } = {}): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  const ok = Number.isFinite(value) && value > 0 && (!options.integer || Number.isInteger(value)) && value <= (options.max ?? Infinity);
  if (!ok) throw new Error(`${name} must be a positive ${options.integer ? 'integer' : 'number'}${options.max ? ` ≤ ${options.max}` : ''}, got ${JSON.stringify(raw)}`);
  return value;
}

export type OidcAlg = 'ES256' | 'EdDSA';

function algs(): OidcAlg[] {
  const raw = process.env.BENCH_OIDC_ALGS ?? 'ES256,EdDSA';
  const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const alg of list) if (alg !== 'ES256' && alg !== 'EdDSA') throw new Error(`BENCH_OIDC_ALGS: unknown algorithm ${alg} (ES256, EdDSA)`);
  if (list.length === 0) throw new Error('BENCH_OIDC_ALGS must name at least one algorithm');
  return list as OidcAlg[];
}

/** A list of connection counts, e.g. "10,50,200". */
function connectionCounts(name: string, fallback: readonly number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return [...fallback];
  const list = raw.split(',').map((s) => Number(s.trim()));
  if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n <= 0 || n > 1000)) throw new Error(`${name} must list connection counts 1–1000, got ${JSON.stringify(raw)}`);
  return list;
}

export interface BenchConfig {
  /** Measured seconds per load run. */
  readonly seconds: number;
  /** Unmeasured seconds before each load run (JIT, connection set-up, caches). */
  readonly warmupSeconds: number;
  readonly connections: number;
  readonly projectionEntries: number;
  readonly oidcAlgs: readonly OidcAlg[];
  readonly output: string | undefined;
  /** The fixed offered rate (req/s) of the server-CPU-per-operation runs. */
  readonly cpuRate: number;
  /** Connections of those runs (few: each new connection's TLS handshake is in the measured CPU). */
  readonly cpuConnections: number;
  /** Issuance throughput at each of these connection counts (the concurrency curve). */
  readonly curveConnections: readonly number[];
  /**
   * Issuance at the curve's fewest connections, this many pairs, each a new Tessera and a new
   * oidc-provider measured in slices in turn (the protected pairs' slices): the light-load target
   * is the median ratio. A median of three moved with one pair here, hence five.
   */
  readonly lightPairs: number;
  /**
   * Refresh at BENCH_CONNECTIONS, Tessera and each oidc-provider in turn while both are up, the
   * order swapped at each pair, this many pairs: the ≥ 1.6× target is the median ratio against the
   * faster peer. Single runs minutes apart read 1.40× to 1.85× here on one build.
   */
  readonly refreshPairs: number;
  /**
   * The protected request and the logged fastify route at BENCH_CONNECTIONS, this many pairs, each
   * a new Tessera and a new logged route: the ≥ 0.95× target is the median of the pairs' ratios.
   * One run minutes apart from its peer moved from 0.83× to 1.03× here on one build.
   */
  readonly protectedPairs: number;
  /**
   * Each protected pair is measured in this many full-load slices a side, alternating between the
   * two servers (the order swapped at each slice), each this many seconds: the machine's drift
   * then falls on both sides alike.
   */
  readonly protectedSlices: number;
  readonly protectedSliceSeconds: number;
  /**
   * oidc-provider refresh tokens made by real authorization_code flows before its refresh runs. Each
   * run (and its warm-up) ends with up to BENCH_CONNECTIONS requests in flight whose new tokens are
   * lost: the default 1,000 leaves about 580 families after the first run, the CPU run and three
   * refresh pairs. Too few shows as the peer's non-200 answers, and the target is then not met.
   */
  readonly oidcRefreshFlows: number;
  /** Mixed-load soak: measured seconds, and the warm-up after which RSS, heap and fds are first read. */
  readonly soakSeconds: number;
  readonly soakWarmupSeconds: number;
  /** Offered rate of the soak's mixed load (req/s over all operations). */
  readonly soakRate: number;
  /** Revocations timed per row of the SSF-fed verifiers part (after 5 unmeasured). */
  readonly ssfSdkSamples: number;
  /** The long-log part: events, the largest account's families and how many of them are live, accounts. */
  readonly scale: { readonly events: number; readonly bigFamilies: number; readonly liveFamilies: number; readonly accounts: number; readonly windowPairs: number };
}

/** `npm run bench -- soak` soaks for the issue's 5 minutes; the full run for 60 s, to stay near 10 minutes in all. */
function soakDefaultSeconds(): number {
  return process.argv.slice(2).includes('soak') ? 300 : 60;
}

export function readConfig(): BenchConfig {
  return {
    seconds: positive('BENCH_SECONDS', 10, { max: 600 }),
    warmupSeconds: positive('BENCH_WARMUP_SECONDS', 2, { max: 60 }),
    connections: positive('BENCH_CONNECTIONS', 50, { integer: true, max: 1000 }),
    projectionEntries: positive('BENCH_PROJECTION_ENTRIES', 1_000_000, { integer: true, max: 10_000_000 }),
    oidcAlgs: algs(),
    output: process.env.BENCH_OUTPUT || undefined,
    cpuRate: positive('BENCH_CPU_RATE', 500, { max: 100_000 }),
    cpuConnections: positive('BENCH_CPU_CONNECTIONS', 10, { integer: true, max: 1000 }),
    curveConnections: connectionCounts('BENCH_CURVE_CONNECTIONS', [10, 50, 200]),
    lightPairs: positive('BENCH_LIGHT_PAIRS', 5, { integer: true, max: 20 }),
    refreshPairs: positive('BENCH_REFRESH_PAIRS', 3, { integer: true, max: 20 }),
    protectedPairs: positive('BENCH_PROTECTED_PAIRS', 4, { integer: true, max: 20 }),
    protectedSlices: positive('BENCH_PROTECTED_SLICES', 8, { integer: true, max: 100 }),
    protectedSliceSeconds: positive('BENCH_PROTECTED_SLICE_SECONDS', 3, { max: 600 }),
    oidcRefreshFlows: positive('BENCH_OIDC_REFRESH_FLOWS', 1000, { integer: true, max: 100_000 }),
    soakSeconds: positive('BENCH_SOAK_SECONDS', soakDefaultSeconds(), { max: 24 * 3600 }),
    soakWarmupSeconds: positive('BENCH_SOAK_WARMUP_SECONDS', 20, { max: 3600 }),
    soakRate: positive('BENCH_SOAK_RATE', 1000, { max: 100_000 }),
    ssfSdkSamples: positive('BENCH_SSF_SDK_SAMPLES', 200, { integer: true, max: 10_000 }),
    scale: {
      events: positive('BENCH_SCALE_EVENTS', 2_000_000, { integer: true, max: 50_000_000 }),
      bigFamilies: positive('BENCH_SCALE_BIG_FAMILIES', 600_000, { integer: true, max: 10_000_000 }),
      liveFamilies: positive('BENCH_SCALE_LIVE_FAMILIES', 10_000, { integer: true, max: 1_000_000 }),
      accounts: positive('BENCH_SCALE_ACCOUNTS', 5_000, { integer: true, max: 1_000_000 }),
      windowPairs: positive('BENCH_SCALE_PAIRS', 5, { integer: true, max: 50 }),
    },
  };
}
