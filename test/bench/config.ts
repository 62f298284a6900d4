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

export interface BenchConfig {
  /** Measured seconds per load run. */
  readonly seconds: number;
  /** Unmeasured seconds before each load run (JIT, connection set-up, caches). */
  readonly warmupSeconds: number;
  readonly connections: number;
  readonly projectionEntries: number;
  readonly oidcAlgs: readonly OidcAlg[];
  readonly output: string | undefined;
}

export function readConfig(): BenchConfig {
  return {
    seconds: positive('BENCH_SECONDS', 10, { max: 600 }),
    warmupSeconds: positive('BENCH_WARMUP_SECONDS', 2, { max: 60 }),
    connections: positive('BENCH_CONNECTIONS', 50, { integer: true, max: 1000 }),
    projectionEntries: positive('BENCH_PROJECTION_ENTRIES', 1_000_000, { integer: true, max: 10_000_000 }),
    oidcAlgs: algs(),
    output: process.env.BENCH_OUTPUT || undefined,
  };
}
