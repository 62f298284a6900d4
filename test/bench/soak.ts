import { existsSync, readdirSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { processCpuSeconds } from './cpu-time.js';
import { progress } from './children.js';
import type { TesseraTarget } from './tessera-target.js';

/**
 * Soak: mixed load on the all-in-one at a fixed offered rate. Each
 * connection walks a token's life over and over: get-oauth-token → refresh-oauth-token →
 * `verifies` protected requests → revoke-oauth-token. Every step must answer 200.
 *
 * The protected requests carry long-lived access tokens (as many as connections, issued before
 * the soak and never revoked, taken in turn), as clients use a token many times. With the fresh token of each cycle instead, every cycle would add an entry to the
 * verifier's VerifiedTokenCache (a few KB each, by design, up to 50,000 entries): at this rate
 * the cache would still be filling after five minutes, and its warming would hide a leak or
 * pass for one. RSS and heap come from the admin listener's /metrics
 * (tessera_process_resident_memory_bytes, tessera_nodejs_heap_size_used_bytes), open handles
 * from /proc/<pid>/fd, sampled every `sampleSeconds`. The heap judged is the one live just after
 * a full GC: the soak's Tessera runs with --expose-gc and full-gc-on-signal.mjs, and each sample
 * sends it SIGUSR2 and reads the process.memoryUsage() it writes right after the GC (the
 * /metrics heap, also kept, is mostly where the GC's sawtooth happened to be: 26–42 MB in one
 * run, and even 300 ms after a full GC, young garbage is back). The value
 * "after warm-up" is the mean of the first four samples after the warm-up, "at the end" the
 * mean of the last four. Open fds: the most of each four.
 *
 * What still grows by design: one revocation-projection entry per revoked family until its
 * access token expires (about 85 bytes each; an hour at the default TTL). The report gives the
 * entries added (tessera_revocation_projection_entries) next to the verdict.
 */
export interface SoakSample {
  readonly atSeconds: number;
  /** From /metrics. */
  readonly rssBytes: number;
  /** From /metrics, as it was: the GC's sawtooth included. */
  readonly heapUsedBytes: number;
  /** process.memoryUsage() just after a full GC (full-gc-on-signal.mjs): the live heap, and the heap's and Buffers' reservations. */
  readonly heapAfterGcBytes: number;
  readonly heapTotalBytes: number;
  readonly externalBytes: number;
  readonly openFds: number;
  readonly cpuSeconds: number;
  readonly projectionEntries: number;
}

export interface SoakPoint {
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly heapTotalBytes: number;
  readonly externalBytes: number;
  readonly openFds: number;
}

export interface SoakResult {
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly offeredRate: number;
  readonly connections: number;
  readonly verifiesPerCycle: number;
  readonly requests: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly statusCodes: Record<string, number>;
  readonly families: number;
  readonly samples: readonly SoakSample[];
  /** heapUsedBytes here is the heap live after a full GC; heapTotal and external say where RSS went besides the heap. */
  readonly afterWarmup: SoakPoint;
  readonly atEnd: SoakPoint;
  readonly rssChange: number;
  readonly heapChange: number;
  readonly fdGrowth: number;
  /** Revocation-projection entries added between the two points: growth by design (see above). */
  readonly projectionEntriesAdded: number;
  readonly verdict: { readonly rssWithin10Percent: boolean; readonly heapWithin10Percent: boolean; readonly noFdGrowth: boolean; readonly allOk: boolean; readonly met: boolean };
}

/** One gauge's value from a Prometheus text exposition. */
function gauge(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  if (!line) throw new Error(`/metrics has no ${name}`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

interface MemoryAfterGc {
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
}

/** Asks the server for a full GC (SIGUSR2) and waits for the line it appends to `memoryFile` after it. */
async function memoryAfterGc(tessera: TesseraTarget, memoryFile: string): Promise<MemoryAfterGc> {
  const linesBefore = existsSync(memoryFile) ? readFileSync(memoryFile, 'utf8').split('\n').filter(Boolean).length : 0;
  tessera.process.signal('SIGUSR2');
  const deadline = performance.now() + 5000;
  for (;;) {
    const lines = existsSync(memoryFile) ? readFileSync(memoryFile, 'utf8').split('\n').filter(Boolean) : [];
    if (lines.length > linesBefore) return JSON.parse(lines[lines.length - 1]!) as MemoryAfterGc;
    if (performance.now() > deadline) throw new Error('the soak server wrote no memory reading within 5 s of SIGUSR2 (is full-gc-on-signal.mjs loaded?)');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function sample(tessera: TesseraTarget, memoryFile: string, startedAt: number): Promise<SoakSample> {
  const afterGc = await memoryAfterGc(tessera, memoryFile);
  const metrics = await tessera.process.adminRequest('/metrics');
  if (metrics.status !== 200) throw new Error(`/metrics answered ${metrics.status}`);
  return {
    atSeconds: (performance.now() - startedAt) / 1000,
    rssBytes: gauge(metrics.text, 'tessera_process_resident_memory_bytes'),
    heapUsedBytes: gauge(metrics.text, 'tessera_nodejs_heap_size_used_bytes'),
    heapAfterGcBytes: afterGc.heapUsed,
    heapTotalBytes: afterGc.heapTotal,
    externalBytes: afterGc.external,
    openFds: readdirSync(`/proc/${tessera.process.pid}/fd`).length,
    cpuSeconds: processCpuSeconds(tessera.process.pid),
    projectionEntries: gauge(metrics.text, 'tessera_revocation_projection_entries'),
  };
}

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

interface CycleContext {
  refresh?: string;
  /** A long-lived access token for this cycle's protected requests. */
  longLived?: string;
}

export async function soak(
  tessera: TesseraTarget,
  /** Where the server's full-gc-on-signal.mjs appends its readings (its BENCH_MEMORY_FILE). */
  memoryFile: string,
  options: { seconds: number; warmupSeconds: number; rate: number; connections: number; verifiesPerCycle?: number; sampleSeconds?: number },
): Promise<SoakResult> {
  const verifiesPerCycle = options.verifiesPerCycle ?? 16;
  // Long-lived tokens, one per connection: autocannon clears a connection's context at each new
  // cycle, so each cycle takes the next one in turn (the verifier sees the same few tokens).
  const longLived: string[] = [];
  let handedOut = 0;
  for (let i = 0; i < options.connections; i += 1) {
    const answer = await tessera.process.postJson('/v5/Authorization/get-oauth-token', {
      api_login_id: tessera.credentials.api_login_id,
      transaction_key: tessera.credentials.transaction_key,
    });
    if (answer.status !== 200) throw new Error(`soak setup: get-oauth-token answered ${answer.status}`);
    longLived.push(String(answer.json().token));
  }
  const sampleSeconds = options.sampleSeconds ?? 5;
  // Samples averaged at each end: 20 s of them, so the GC's sawtooth averages out.
  const window = 4;
  const json = { 'content-type': 'application/json' };
  let families = 0;
  const keepPair = (status: number, body: string, context: CycleContext) => {
    if (status !== 200) return;
    context.refresh = (JSON.parse(body) as { refresh_token: string }).refresh_token;
  };
  const requests: autocannon.Request[] = [
    {
      method: 'POST',
      path: '/v5/Authorization/get-oauth-token',
      headers: json,
      body: JSON.stringify({ api_login_id: tessera.credentials.api_login_id, transaction_key: tessera.credentials.transaction_key }),
      onResponse: (status: number, body: string, context: object) => {
        families += 1;
        keepPair(status, body, context as CycleContext);
      },
    },
    {
      method: 'POST',
      path: '/v5/Authorization/refresh-oauth-token',
      headers: json,
      setupRequest: (request: autocannon.Request, context: object) => ({ ...request, body: JSON.stringify({ refresh_token: (context as CycleContext).refresh ?? 'tsr_missing' }) }),
      onResponse: (status: number, body: string, context: object) => keepPair(status, body, context as CycleContext),
    },
    ...Array.from({ length: verifiesPerCycle }, () => ({
      method: 'POST' as const,
      path: '/v5/Transaction/charge',
      body: '{}',
      setupRequest: (request: autocannon.Request, context: object) => {
        const cycle = context as CycleContext;
        cycle.longLived ??= longLived[(handedOut += 1) % longLived.length];
        return { ...request, headers: { ...json, authorization: `Bearer ${cycle.longLived}` } };
      },
    })),
    {
      method: 'POST',
      path: '/v5/Authorization/revoke-oauth-token',
      headers: json,
      setupRequest: (request: autocannon.Request, context: object) => ({ ...request, body: JSON.stringify({ refresh_token: (context as CycleContext).refresh ?? 'tsr_missing' }) }),
    },
  ];
  const samples: SoakSample[] = [];
  const startedAt = performance.now();
  let sampling: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    sampling = sampling.then(async () => {
      samples.push(await sample(tessera, memoryFile, startedAt));
    });
  }, sampleSeconds * 1000);
  progress(`soak: ${options.warmupSeconds} s warm-up + ${options.seconds} s at ${options.rate} req/s over ${options.connections} connections, cycle issue → refresh → ${verifiesPerCycle}× charge (long-lived tokens) → revoke`);
  let result: autocannon.Result;
  try {
    result = await autocannon({
      url: tessera.origin,
      connections: options.connections,
      duration: options.warmupSeconds + options.seconds,
      overallRate: options.rate,
      pipelining: 1,
      timeout: 10,
      requests,
    });
  } finally {
    clearInterval(timer);
    await sampling;
  }
  // Only samples taken under load: one that lands after autocannon closed its connections would show fewer fds.
  const underLoad = samples.filter((s) => s.atSeconds >= options.warmupSeconds && s.atSeconds < options.warmupSeconds + options.seconds);
  const afterWarmupSamples = underLoad.slice(0, window);
  const lastSamples = underLoad.slice(-window);
  if (underLoad.length < 2 * window) throw new Error(`soak too short for its samples: ${samples.length} samples`);
  const point = (list: SoakSample[]) => ({
    rssBytes: mean(list.map((s) => s.rssBytes)),
    heapUsedBytes: mean(list.map((s) => s.heapAfterGcBytes)),
    heapTotalBytes: mean(list.map((s) => s.heapTotalBytes)),
    externalBytes: mean(list.map((s) => s.externalBytes)),
    openFds: Math.max(...list.map((s) => s.openFds)),
  });
  const afterWarmup = point(afterWarmupSamples);
  const atEnd = point(lastSamples);
  const rssChange = atEnd.rssBytes / afterWarmup.rssBytes - 1;
  const heapChange = atEnd.heapUsedBytes / afterWarmup.heapUsedBytes - 1;
  const fdGrowth = atEnd.openFds - afterWarmup.openFds;
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;
  const allOk = result.non2xx === 0 && result.errors === 0 && result.timeouts === 0;
  const verdict = {
    rssWithin10Percent: Math.abs(rssChange) <= 0.1,
    heapWithin10Percent: Math.abs(heapChange) <= 0.1,
    noFdGrowth: fdGrowth <= 0,
    allOk,
  };
  return {
    seconds: options.seconds,
    warmupSeconds: options.warmupSeconds,
    offeredRate: options.rate,
    connections: options.connections,
    verifiesPerCycle,
    requests: result['2xx'] + result.non2xx,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    families,
    samples,
    afterWarmup,
    atEnd,
    rssChange,
    heapChange,
    fdGrowth,
    projectionEntriesAdded: Math.round(mean(lastSamples.map((s) => s.projectionEntries)) - mean(afterWarmupSamples.map((s) => s.projectionEntries))),
    verdict: { ...verdict, met: verdict.rssWithin10Percent && verdict.heapWithin10Percent && verdict.noFdGrowth && verdict.allOk },
  };
}

export function describeSoak(soakResult: SoakResult): string {
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
  const pct = (change: number) => `${change >= 0 ? '+' : ''}${(change * 100).toFixed(1)}%`;
  const v = soakResult.verdict;
  return (
    `soak: ${soakResult.seconds} s after ${soakResult.warmupSeconds} s warm-up at ${soakResult.offeredRate} req/s (${soakResult.requests} requests, ${soakResult.families} families, ` +
    `non-2xx ${soakResult.non2xx}, errors ${soakResult.errors}, timeouts ${soakResult.timeouts}); ` +
    `RSS ${mb(soakResult.afterWarmup.rssBytes)} → ${mb(soakResult.atEnd.rssBytes)} (${pct(soakResult.rssChange)}), ` +
    `heap live after a full GC ${mb(soakResult.afterWarmup.heapUsedBytes)} → ${mb(soakResult.atEnd.heapUsedBytes)} (${pct(soakResult.heapChange)}), ` +
    `heap reserved ${mb(soakResult.afterWarmup.heapTotalBytes)} → ${mb(soakResult.atEnd.heapTotalBytes)}, external ${mb(soakResult.afterWarmup.externalBytes)} → ${mb(soakResult.atEnd.externalBytes)}, ` +
    `RSS outside them ${mb(soakResult.afterWarmup.rssBytes - soakResult.afterWarmup.heapTotalBytes - soakResult.afterWarmup.externalBytes)} → ${mb(soakResult.atEnd.rssBytes - soakResult.atEnd.heapTotalBytes - soakResult.atEnd.externalBytes)} (native: SQLite's page caches among it), ` +
    `open fds ${soakResult.afterWarmup.openFds} → ${soakResult.atEnd.openFds}; revocation projection +${soakResult.projectionEntriesAdded} entries (by design, ~85 B each until their tokens expire); verdict: RSS ${v.rssWithin10Percent ? 'within' : 'OUTSIDE'} 10%, heap ${v.heapWithin10Percent ? 'within' : 'OUTSIDE'} 10%, ` +
    `fds ${v.noFdGrowth ? 'no growth' : 'GREW'}, answers ${v.allOk ? 'all 2xx' : 'NOT all 2xx'} → ${v.met ? 'PASS' : 'FAIL'}`
  );
}
