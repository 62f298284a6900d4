/**
 * `npm run bench`: Tessera against its peers in one run on this machine. Not a test: it
 * asserts nothing and never runs under `npm test`. Progress goes to stderr, the report to
 * stdout, and the figures as JSON to $BENCH_OUTPUT when set.
 *
 * Every server is its own child process on 127.0.0.1 over HTTPS with the same certificate;
 * autocannon runs in this process. Each load run: BENCH_WARMUP_SECONDS unmeasured, then
 * BENCH_SECONDS measured, BENCH_CONNECTIONS connections, no pipelining.
 *
 * `npm run bench -- audit` runs only the audit index part (1 M events; a few minutes).
 */
import { cpus, loadavg } from 'node:os';
import { auditRows, describeAudit, measureAuditIndex, type AuditIndexResult } from './audit-index.js';
import { startBareFastifyPeer } from './bare-fastify-peer.js';
import { cleanupAll, progress } from './children.js';
import { readConfig, type OidcAlg } from './config.js';
import { issueAmount, load, warmUp, type LoadResult, type LoadTarget } from './load.js';
import { startOidcProviderPeer } from './oidc-provider-peer.js';
import { measureProjection, type ProjectionResult } from './projection-memory.js';
import { describePropagation, measureRevocationPropagation, type PropagationResult } from './revocation-propagation.js';
import { describeLoad, formatTable, writeJson, type Row } from './report.js';
import { allowedCpus, describePinning, detectPinning, pinBenchProcess } from './pinning.js';
import { RefreshPool } from './refresh-pool.js';
import { chargeTarget, issueTarget, refreshTarget, startTesseraTarget } from './tessera-target.js';

const config = readConfig();
const parts = process.argv.slice(2);
if (parts.length > 1 || (parts.length === 1 && parts[0] !== 'audit')) throw new Error(`usage: npm run bench [-- audit]; got ${parts.join(' ')}`);
const runOptions = { seconds: config.seconds, connections: config.connections };
const warmOptions = { seconds: config.warmupSeconds, connections: config.connections };
const loadAverages: { phase: string; loadavg1m: number }[] = [];
const pinning = detectPinning();
/** Where each server under load runs: taskset's CPU list, or nowhere in particular. */
const serverCpus = pinning.pinned ? pinning.serverCpus : undefined;
/** The CPUs each process was allowed, read back from /proc: the report shows the pinning took. */
const affinity: Record<string, string> = {};

async function measure(name: string, target: LoadTarget): Promise<LoadResult> {
  loadAverages.push({ phase: name, loadavg1m: loadavg()[0] ?? 0 });
  progress(`${name}: warm-up ${config.warmupSeconds} s, then ${config.seconds} s measured`);
  await warmUp(target, warmOptions);
  const result = await load(target, runOptions);
  progress(describeLoad(name, result));
  return result;
}

interface Results {
  issue: LoadResult;
  oidcProvider: Partial<Record<OidcAlg, LoadResult>>;
  refresh: LoadResult & { poolSize: number; poolLeft: number; recycled: number; exhausted: number };
  verification: LoadResult;
  bareFastify: LoadResult;
  projection: ProjectionResult;
  /** Absent when no Kafka broker could be had (no java/maven and no TESSERA_KAFKA_BROKERS). */
  propagation?: PropagationResult;
  audit: AuditIndexResult;
}

async function main(): Promise<void> {
  const started = new Date();
  progress(`config ${JSON.stringify(config)}; ${cpus().length} CPUs; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const results: Partial<Results> = {};

  progress(describePinning(pinning));
  // autocannon runs in this process: it generates load from its own core while servers are under load.
  pinBenchProcess(pinning, pinning.loadGeneratorCpus);
  affinity['bench (autocannon)'] = allowedCpus(process.pid);
  progress('starting Tessera (tessera start, temp data folder)');
  const tessera = await startTesseraTarget(serverCpus !== undefined ? { cpuList: serverCpus } : {});
  affinity.Tessera = allowedCpus(tessera.process.pid);
  try {
    // 1. get-oauth-token vs oidc-provider client_credentials.
    results.issue = await measure('Tessera get-oauth-token', issueTarget(tessera));
    results.oidcProvider = {};
    for (const alg of config.oidcAlgs) {
      const peer = await startOidcProviderPeer({ alg, tlsFiles: tessera.tlsFiles, ...(serverCpus !== undefined ? { cpuList: serverCpus } : {}) });
      affinity[`oidc-provider ${alg}`] = allowedCpus(peer.pid);
      try {
        results.oidcProvider[alg] = await measure(`oidc-provider ${alg} client_credentials`, peer.issue);
      } finally {
        await peer.stop();
      }
    }

    // 2. refresh-oauth-token from a pre-issued pool of single-use refresh tokens.
    const poolSize = Math.min(500_000, Math.ceil(results.issue.reqPerSec * (config.seconds + config.warmupSeconds) * 1.3) + config.connections * 4);
    progress(`pre-issuing ${poolSize} token pairs for the refresh run (not measured)`);
    const tokens: string[] = [];
    await issueAmount(
      issueTarget(tessera, (status, body) => {
        if (status === 200) tokens.push((JSON.parse(body) as { refresh_token: string }).refresh_token);
      }),
      { amount: poolSize, connections: config.connections },
    );
    const issued = tokens.length;
    const pool = new RefreshPool(tokens);
    const refresh = await measure('Tessera refresh-oauth-token', refreshTarget(tessera, pool));
    results.refresh = { ...refresh, poolSize: issued, poolLeft: pool.remaining, recycled: pool.recycled, exhausted: pool.exhausted };
    progress(`refresh pool: ${issued} pre-issued (warm-up and measured run draw from it), ${pool.remaining} left, ${pool.recycled} requests used a token returned during the run, ${pool.exhausted} found none`);

    // 3. A protected request vs a bare fastify route. A fresh pair: its family was never rotated.
    const pair = await tessera.process.postJson('/v5/Authorization/get-oauth-token', {
      api_login_id: tessera.credentials.api_login_id,
      transaction_key: tessera.credentials.transaction_key,
    });
    const accessToken = String(pair.json().token);
    const probe = await tessera.process.postJson('/v5/Transaction/charge', {}, { authorization: `Bearer ${accessToken}` });
    if (probe.status !== 200) throw new Error(`charge with a fresh token answered ${probe.status}: ${probe.text}`);
    results.verification = await measure('Tessera POST /v5/Transaction/charge (bearer)', chargeTarget(tessera, accessToken));
    const bare = await startBareFastifyPeer({ tlsFiles: tessera.tlsFiles, bearer: accessToken, ...(serverCpus !== undefined ? { cpuList: serverCpus } : {}) });
    affinity['bare fastify'] = allowedCpus(bare.child.process.pid!);
    try {
      results.bareFastify = await measure('bare fastify POST route', bare.charge);
    } finally {
      await bare.stop();
    }
  } finally {
    await tessera.stop();
    // The parts below (broker, verifiers, projection, audit) run unpinned, as they always have.
    pinBenchProcess(pinning, pinning.allCpus);
  }

  // 4. Revocation → rejected by a Kafka-fed verifier, over a real broker.
  loadAverages.push({ phase: 'propagation', loadavg1m: loadavg()[0] ?? 0 });
  progress('revocation propagation via Kafka: 1000 revocations');
  try {
    results.propagation = await measureRevocationPropagation({ revocations: Number(process.env.BENCH_REVOCATIONS ?? 1000), hops: true });
    progress(describePropagation(results.propagation));
  } catch (error) {
    progress(`propagation NOT measured: ${(error as Error).message}`);
  }

  // 5. Projection memory and rebuild, in a child with --expose-gc.
  loadAverages.push({ phase: 'projection', loadavg1m: loadavg()[0] ?? 0 });
  progress(`projection: ${config.projectionEntries} entries in memory, then from a SQLite log`);
  results.projection = await measureProjection(config.projectionEntries);

  // 6. The audit index: rebuilt from a 1 M-event log, then queried through the admin routes.
  loadAverages.push({ phase: 'audit', loadavg1m: loadavg()[0] ?? 0 });
  progress('audit index: 1 M events over 10,000 accounts');
  results.audit = await measureAuditIndex();

  report(results as Results, started);
}

/** `npm run bench -- audit`: the audit index part alone. */
async function auditOnly(): Promise<void> {
  const started = new Date();
  const loadAtStart = loadavg()[0] ?? 0;
  progress(`audit index only; ${cpus().length} CPUs; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const audit = await measureAuditIndex();
  const lines = [
    `Tessera benchmark, audit index only — ${started.toISOString()} — node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}`,
    `1-minute load average at start: ${loadAtStart.toFixed(2)}, at the end: ${(loadavg()[0] ?? 0).toFixed(2)}`,
    '',
    describeAudit(audit),
    '',
    formatTable(auditRows(audit)),
    '',
  ];
  process.stdout.write(lines.join('\n'));
  if (config.output) {
    writeJson(config.output, { started: started.toISOString(), node: process.version, cpus: cpus().length, results: { audit }, table: auditRows(audit) });
    progress(`wrote ${config.output}`);
  }
}

function bestPeer(oidc: Results['oidcProvider']): { alg: OidcAlg; result: LoadResult } {
  const entries = Object.entries(oidc) as [OidcAlg, LoadResult][];
  const [alg, result] = entries.reduce((best, next) => (next[1].reqPerSec > best[1].reqPerSec ? next : best));
  return { alg, result };
}

function clean(result: LoadResult): boolean {
  return result.non2xx === 0 && result.errors === 0;
}

function report(results: Results, started: Date): void {
  const peer = bestPeer(results.oidcProvider);
  const issueRatio = results.issue.reqPerSec / peer.result.reqPerSec;
  const verifyRatio = results.verification.reqPerSec / results.bareFastify.reqPerSec;
  const refreshNon200Share = results.refresh.responses === 0 ? 1 : results.refresh.non2xx / results.refresh.responses;
  const { memory, sqlite } = results.projection;
  const millions = (n: number) => (n === 1_000_000 ? '1M' : String(n));
  const rows: Row[] = [
    {
      what: `get-oauth-token req/s (peer: oidc-provider ${peer.alg})`,
      tessera: results.issue.reqPerSec,
      peer: peer.result.reqPerSec,
      ratio: issueRatio,
      target: '≥ 3×',
      met: issueRatio >= 3 && clean(results.issue) && clean(peer.result),
    },
    ...Object.entries(results.oidcProvider)
      .filter(([alg]) => alg !== peer.alg)
      .map(([alg, r]) => ({ what: `  (oidc-provider ${alg} req/s)`, tessera: '', peer: r.reqPerSec, ratio: results.issue.reqPerSec / r.reqPerSec, target: '', met: '—' as const })),
    { what: 'get-oauth-token p50 ms', tessera: results.issue.latencyP50Ms, peer: peer.result.latencyP50Ms, ratio: '', target: '', met: '—' },
    { what: 'get-oauth-token p99 ms', tessera: results.issue.latencyP99Ms, peer: peer.result.latencyP99Ms, ratio: '', target: '', met: '—' },
    { what: 'refresh-oauth-token req/s', tessera: results.refresh.reqPerSec, peer: '—', ratio: '—', target: '', met: '—' },
    { what: 'refresh-oauth-token p50 / p99 ms', tessera: `${results.refresh.latencyP50Ms} / ${results.refresh.latencyP99Ms}`, peer: '—', ratio: '—', target: '', met: '—' },
    {
      what: 'refresh-oauth-token non-200 share',
      tessera: `${(refreshNon200Share * 100).toFixed(3)}%`,
      peer: '—',
      ratio: '—',
      target: '0',
      met: results.refresh.non2xx === 0 && results.refresh.errors === 0 && results.refresh.responses > 0,
    },
    {
      what: 'protected request req/s (peer: bare fastify)',
      tessera: results.verification.reqPerSec,
      peer: results.bareFastify.reqPerSec,
      ratio: verifyRatio,
      target: '≥ 0.70×',
      met: verifyRatio >= 0.7 && clean(results.verification) && clean(results.bareFastify),
    },
    { what: 'protected request p50 / p99 ms', tessera: `${results.verification.latencyP50Ms} / ${results.verification.latencyP99Ms}`, peer: `${results.bareFastify.latencyP50Ms} / ${results.bareFastify.latencyP99Ms}`, ratio: '', target: '', met: '—' },
    ...(results.propagation
      ? [
          {
            what: `revocation → rejected via Kafka, p50 / p99 ms (${results.propagation.samples})`,
            tessera: `${results.propagation.p50Ms} / ${results.propagation.p99Ms}`,
            peer: '—',
            ratio: '—',
            target: `p50 ≤ 10, p99 ≤ ${results.propagation.targetP99Ms}`,
            met: results.propagation.p50Ms <= 10 && results.propagation.p99Ms <= results.propagation.targetP99Ms,
          },
        ]
      : []),
    { what: 'projection heap bytes / live entry', tessera: memory.bytesPerEntry, peer: '—', ratio: '—', target: '≤ 200', met: memory.bytesPerEntry <= 200 },
    { what: `projection: apply ${millions(memory.entries)} events, s`, tessera: memory.applySeconds, peer: '—', ratio: '—', target: '≤ 5', met: memory.applySeconds <= 5 },
    { what: `projection: rebuild ${millions(sqlite.entries)} from SQLite, s`, tessera: sqlite.rebuildSeconds, peer: '—', ratio: '—', target: '≤ 5', met: sqlite.rebuildSeconds <= 5 },
    ...auditRows(results.audit),
  ];

  const lines = [
    `Tessera benchmark — ${started.toISOString()} — node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}`,
    `HTTPS on 127.0.0.1 for every server (same self-signed P-256 certificate); autocannon 8 in the bench process;`,
    `${describePinning(pinning)}; allowed CPUs read back: ${Object.entries(affinity).map(([name, list]) => `${name} ${list}`).join(', ')}`,
    `${config.connections} connections, no pipelining, ${config.warmupSeconds} s warm-up + ${config.seconds} s measured per run; req/s counts 2xx only.`,
    `Tessera: tessera start, durable SQLite (WAL, synchronous=FULL, group commit), TESSERA_LOG_LEVEL=${process.env.BENCH_TESSERA_LOG_LEVEL ?? 'info'}.`,
    `1-minute load average at each phase: ${loadAverages.map((l) => `${l.phase} ${l.loadavg1m.toFixed(2)}`).join('; ')}`,
    '',
    describeLoad('Tessera get-oauth-token', results.issue),
    ...Object.entries(results.oidcProvider).map(([alg, r]) => describeLoad(`oidc-provider ${alg}`, r)),
    describeLoad('Tessera refresh-oauth-token', results.refresh),
    `  refresh pool ${results.refresh.poolSize} pre-issued, ${results.refresh.poolLeft} unused, ${results.refresh.recycled} recycled, ${results.refresh.exhausted} exhausted`,
    describeLoad('Tessera charge', results.verification),
    describeLoad('bare fastify', results.bareFastify),
    `projection in memory: ${memory.entries} entries, ${memory.heapBytes} heap bytes (${memory.bytesPerEntry.toFixed(1)}/entry), apply ${memory.applySeconds.toFixed(3)} s`,
    `projection from SQLite: ${sqlite.entries} events appended in ${sqlite.appendSeconds.toFixed(1)} s (setup, ${sqlite.appendEventsPerSecond.toFixed(0)}/s), ` +
      `log ${(sqlite.logFileBytes / 1e6).toFixed(0)} MB, rebuilt in ${sqlite.rebuildSeconds.toFixed(2)} s (${sqlite.bytesPerEntry.toFixed(1)} heap bytes/entry)`,
    ...(results.propagation ? [describePropagation(results.propagation)] : []),
    describeAudit(results.audit),
    '',
    formatTable(rows),
    '',
  ];
  process.stdout.write(lines.join('\n'));
  if (config.output) {
    writeJson(config.output, {
      started: started.toISOString(),
      node: process.version,
      cpus: cpus().length,
      config,
      tesseraLogLevel: process.env.BENCH_TESSERA_LOG_LEVEL ?? 'info',
      pinning,
      affinity,
      loadAverages,
      results,
      ratios: { issueVsOidcProvider: issueRatio, issuePeerAlg: peer.alg, verificationVsBareFastify: verifyRatio, refreshNon200Share },
      table: rows,
    });
    progress(`wrote ${config.output}`);
  }
}

try {
  await (parts[0] === 'audit' ? auditOnly() : main());
} catch (error) {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
} finally {
  cleanupAll();
}
