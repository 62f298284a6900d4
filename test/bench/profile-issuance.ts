/**
 * Where an operation spends its CPU: the all-in-one under get-oauth-token load
 * (or refresh-oauth-token, or a protected request: BENCH_PROFILE_OP), started with `node --cpu-prof` (one profile per thread: the main
 * thread and the SQLite writer thread write their own), pinned as the bench pins it. Prints
 * each thread's self time by function and by package, busiest first, and the server CPU per
 * issuance read from /proc over the same window.
 *
 *   node --import tsx test/bench/profile-issuance.ts
 *
 * env: BENCH_PROFILE_OP (`issue`, `refresh` or `charge`), BENCH_PROFILE_SECONDS (10), BENCH_PROFILE_RATE (unset: as fast as it answers; a number:
 * that fixed rate), BENCH_CONNECTIONS (50), BENCH_PROFILE_DIR (a temp folder; the .cpuprofile
 * files stay there for Chrome DevTools), BENCH_PROFILE_TOP (25).
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanupAll, progress, repositoryRoot } from './children.js';
import { processCpuSeconds } from './cpu-time.js';
import { load, warmUp, type LoadTarget } from './load.js';
import { RefreshPool } from './refresh-pool.js';
import { detectPinning, describePinning, pinBenchProcess } from './pinning.js';
import { chargeTarget, freshAccessToken, issueTarget, preIssueRefreshTokens, refreshTarget, startTesseraTarget, type TesseraTarget } from './tessera-target.js';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Where a frame's code lives: a workspace package, a dependency, node itself, or V8's own states. */
function packageOf(url: string, functionName: string): string {
  if (url === '') return `(${functionName || 'native'})`;
  if (url.startsWith('node:')) return url.split('/')[0]!;
  const inModules = url.lastIndexOf('/node_modules/');
  if (inModules >= 0) {
    const rest = url.slice(inModules + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const relative = url.replace(`file://${repositoryRoot}/`, '');
  const [top, name] = relative.split('/');
  return top === 'packages' || top === 'services' ? `${top}/${name}` : relative;
}

function summarise(profile: CpuProfile, top: number): string[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMicros = new Map<number, number>();
  profile.samples.forEach((id, index) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));
  const total = profile.endTime - profile.startTime;
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  for (const [id, micros] of selfMicros) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const where = packageOf(url, functionName);
    const name = `${functionName || '(anonymous)'} ${url ? `${url.replace(`file://${repositoryRoot}/`, '').replace(/^.*node_modules\//, '')}:${lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    byPackage.set(where, (byPackage.get(where) ?? 0) + micros);
  }
  const share = (micros: number) => `${((micros / total) * 100).toFixed(1).padStart(5)}%`;
  const list = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, micros]) => `  ${share(micros)}  ${name}`);
  return [`by package (self time, share of the ${(total / 1e6).toFixed(1)} s profiled):`, ...list(byPackage), 'by function:', ...list(byFunction)];
}

const seconds = Number(process.env.BENCH_PROFILE_SECONDS ?? 10);
const rate = process.env.BENCH_PROFILE_RATE ? Number(process.env.BENCH_PROFILE_RATE) : undefined;
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const top = Number(process.env.BENCH_PROFILE_TOP ?? 25);
const profileDir = process.env.BENCH_PROFILE_DIR ?? mkdtempSync(join(tmpdir(), 'tessera-profile-'));
const pinning = detectPinning();
const operation = process.env.BENCH_PROFILE_OP ?? 'issue';
if (!['issue', 'refresh', 'charge'].includes(operation)) throw new Error(`BENCH_PROFILE_OP: issue, refresh or charge; got ${operation}`);

/** The load for the chosen operation; refresh pre-issues single-use tokens first (not profiled apart: start-up and setup are in the profile). */
async function targetFor(tessera: TesseraTarget): Promise<LoadTarget> {
  if (operation === 'issue') return issueTarget(tessera);
  if (operation === 'charge') return chargeTarget(tessera, await freshAccessToken(tessera));
  const tokens = await preIssueRefreshTokens(tessera, { amount: Math.ceil((rate ?? 4000) * (seconds + 2) * 1.2), connections });
  return refreshTarget(tessera, new RefreshPool(tokens));
}

try {
  progress(describePinning(pinning));
  pinBenchProcess(pinning, pinning.loadGeneratorCpus);
  const tessera = await startTesseraTarget({
    ...(pinning.pinned ? { cpuList: pinning.serverCpus } : {}),
    nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profileDir],
  });
  let cpuPerIssuance = 0;
  let reqPerSec = 0;
  try {
    const target = await targetFor(tessera);
    const options = { seconds, connections, ...(rate !== undefined ? { overallRate: rate } : {}) };
    await warmUp(target, { ...options, seconds: 2 });
    const before = processCpuSeconds(tessera.process.pid);
    const result = await load(target, options);
    cpuPerIssuance = ((processCpuSeconds(tessera.process.pid) - before) / (result.reqPerSec * result.seconds)) * 1e6;
    reqPerSec = result.reqPerSec;
  } finally {
    // A clean exit writes the profiles.
    await tessera.stop();
  }
  const lines = [`${operation}: ${reqPerSec.toFixed(0)} req/s at ${rate ?? 'full'} rate over ${connections} connections; ${cpuPerIssuance.toFixed(0)} µs server CPU per request; profiles in ${profileDir}`];
  for (const file of readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile')).sort()) {
    const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as CpuProfile;
    lines.push('', `== ${file} (the whole process life, start-up included)`, ...summarise(profile, top));
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  pinBenchProcess(pinning, pinning.allCpus);
  cleanupAll();
}
