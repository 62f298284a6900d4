import { statSync } from 'node:fs';
import { join } from 'node:path';
import { streams, type TesseraEvent } from '@tessera/events';
import { writeBulkLog, type BulkEntry } from '@tessera/event-store-sqlite/testing';
import { progress } from './children.js';
import { load, warmUp, type LoadResult } from './load.js';
import { atMost, median, type Row } from './report.js';
import { issueTarget, startTesseraTarget, type TesseraTarget } from './tessera-target.js';

/**
 * No stalls at scale: the all-in-one, started on a young log, grows live to a long one (the bench
 * writes it into the server's own events.db in chunks, as another process would), then takes
 * issuance at a fixed 70% of the maximum measured in the same run, alone and with admin work
 * beside it, in turn, pairs of windows (BENCH_SCALE_PAIRS): the first revoke-tokens of an account with 600 k
 * families (at most 10 k live) on a cold families model (retried while it answers 503), then
 * access-at and events queries on that account, over and over. Reports issuance p99 and
 * event-loop delay p99 (tessera_nodejs_eventloop_lag_p99_seconds, read just before and after each
 * window: prom-client resets it on each read), the medians over the pairs and each window's, the
 * admin answers' times, and access-at's first page on the index grown live, without a restart.
 */
export interface ScaleOptions {
  /** Events of the long log (default 2 M). */
  readonly events: number;
  /** Families of the largest account (default 600 k), of which `liveFamilies` were issued in the last hour. */
  readonly bigFamilies: number;
  readonly liveFamilies: number;
  readonly accounts: number;
  /**
   * Alone and beside windows taken in turn (default 5 pairs): the figures are the medians over
   * them. One window's p99 under open-loop load moves 2–3× between windows at one rate; with three
   * pairs one slow window moved the verdict.
   */
  readonly windowPairs: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly connections: number;
  readonly cpuList?: string;
}

export interface IssuanceWindow {
  readonly load: LoadResult;
  readonly eventLoopP99Ms: number;
  /** The main thread's garbage collections over the window (tessera_nodejs_gc_duration_seconds): a pause delays the loop as long as it lasts. */
  readonly gc: { readonly pauses: number; readonly ms: number; readonly over10Ms: number };
}

export interface AdminAnswer {
  readonly what: string;
  readonly status: number;
  readonly ms: number;
}

export interface ScaleResult {
  readonly events: number;
  readonly logBytes: number;
  readonly growSeconds: number;
  readonly caughtUpSeconds: number;
  readonly rssMbBefore: number;
  readonly rssMbAfter: number;
  readonly maxIssuance: LoadResult;
  readonly offeredRate: number;
  /** Alone and beside windows taken in turn, alone first in odd pairs and beside first in even ones: a window's p99 moves more between runs than the target allows. */
  readonly pairs: readonly { readonly alone: IssuanceWindow; readonly beside: IssuanceWindow; readonly besideFirst: boolean }[];
  readonly admin: readonly AdminAnswer[];
  readonly firstRevoke: AdminAnswer;
  readonly accessAtFirstPage: readonly AdminAnswer[];
}

const bigAccount = 'acct-scale-big';
const hash = 'H'.repeat(43);
const day = 86_400;

/**
 * The long log, in time order: `accounts` accounts (the largest first), then families. The
 * largest account's dead families are spread over days 0–30 of a 40-day history (each refresh
 * token lives 7 days, so all are dead at its end); its live ones, and a share of everyone else's,
 * come in its last hour. Everything else is spread over the 40 days.
 */
function* longLog(options: ScaleOptions, now: number): Generator<BulkEntry> {
  const start = now - 40 * day;
  const accountIds = [bigAccount, ...Array.from({ length: options.accounts - 1 }, (_, i) => `acct-scale-${i}`)];
  for (const accountId of accountIds) {
    yield { stream: streams.account(accountId), event: { type: 'AccountRegistered', v: 1, accountId, name: accountId, permissions: ['transaction:charge'], at: start }, recordedAt: start * 1000 };
    yield {
      stream: streams.account(accountId),
      event: { type: 'ApiCredentialIssued', v: 1, accountId, credentialId: `cred-${accountId}`, apiLoginId: `tsl_${accountId}`, transactionKeyHash: hash, at: start },
      recordedAt: start * 1000,
    };
  }
  const families = options.events - accountIds.length * 2;
  const deadBig = options.bigFamilies - options.liveFamilies;
  const others = families - options.bigFamilies;
  // Days 0–30: the big account's dead families interleaved with others'; days 30–40 minus an hour: others'; the last hour: the live ones and the rest.
  const othersEarly = Math.floor(others * 0.7);
  const othersLate = others - othersEarly - options.liveFamilies;
  let seq = 0;
  const family = (accountId: string, issuedAt: number): BulkEntry => {
    const familyId = `scale-${seq++}`;
    const event: TesseraEvent = {
      type: 'TokenIssued', v: 1, familyId, accountId, credentialId: `cred-${accountId}`, apiLoginId: `tsl_${accountId}`, generation: 0,
      refreshTokenHash: hash, jti: `j${familyId}`, scope: ['transaction:charge'], issuedAt, accessExpiresAt: issuedAt + 3600, refreshExpiresAt: issuedAt + 7 * day,
    };
    return { stream: streams.family(familyId), event, recordedAt: issuedAt * 1000 };
  };
  const other = (i: number) => accountIds[1 + (i % (accountIds.length - 1))]!;
  const early = deadBig + othersEarly;
  for (let i = 0, big = 0, rest = 0; i < early; i += 1) {
    const issuedAt = start + Math.floor((i / early) * 30 * day);
    // Keep the big account's share even across the 30 days.
    if (big * early < i * deadBig || rest >= othersEarly) {
      big += 1;
      yield family(bigAccount, issuedAt);
    } else yield family(other(rest++), issuedAt);
  }
  for (let i = 0; i < othersLate; i += 1) yield family(other(i), start + 30 * day + Math.floor((i / othersLate) * (10 * day - 3600)));
  for (let i = 0; i < options.liveFamilies * 2; i += 1) {
    const issuedAt = now - 3600 + Math.floor((i / (options.liveFamilies * 2)) * 3000);
    yield i % 2 === 0 ? family(bigAccount, issuedAt) : family(other(i), issuedAt);
  }
}

/** Splits a generator into arrays of `size`. */
function* chunks<T>(items: Iterable<T>, size: number): Generator<T[]> {
  let chunk: T[] = [];
  for (const item of items) {
    chunk.push(item);
    if (chunk.length === size) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}

async function metrics(tessera: TesseraTarget): Promise<(name: string) => number> {
  const text = (await tessera.process.adminRequest('/metrics')).text;
  return (name) => Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
}

/** The sum of a metric's samples over its label sets; only those whose labels hold `labels`, when given. */
function sampleSum(text: string, name: string, labels = ''): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const sample = /^(\w+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (sample?.[1] === name && (sample[2] ?? '').includes(labels)) sum += Number(sample[3]);
  }
  return sum;
}

function gcBetween(before: string, after: string): IssuanceWindow['gc'] {
  const delta = (name: string, labels = '') => sampleSum(after, name, labels) - sampleSum(before, name, labels);
  const pauses = delta('tessera_nodejs_gc_duration_seconds_count');
  return {
    pauses,
    ms: delta('tessera_nodejs_gc_duration_seconds_sum') * 1000,
    over10Ms: pauses - delta('tessera_nodejs_gc_duration_seconds_bucket', 'le="0.01"'),
  };
}

async function timed(what: string, request: () => Promise<{ status: number }>): Promise<AdminAnswer> {
  const started = performance.now();
  const { status } = await request();
  return { what, status, ms: performance.now() - started };
}

/** A fixed-rate issuance window, with the event loop's p99 over exactly that window. */
async function window(tessera: TesseraTarget, rate: number, options: ScaleOptions, beside?: (until: () => boolean) => Promise<void>): Promise<IssuanceWindow> {
  // Reading /metrics resets the event-loop histogram.
  const before = (await tessera.process.adminRequest('/metrics')).text;
  let running = true;
  const work = beside?.(() => running);
  const result = await load(issueTarget(tessera), { seconds: options.seconds, connections: options.connections, overallRate: rate });
  running = false;
  await work;
  const after = (await tessera.process.adminRequest('/metrics')).text;
  return { load: result, eventLoopP99Ms: sampleSum(after, 'tessera_nodejs_eventloop_lag_p99_seconds') * 1000, gc: gcBetween(before, after) };
}

export async function measureScale(options: ScaleOptions): Promise<ScaleResult> {
  const tessera = await startTesseraTarget({ ...(options.cpuList !== undefined ? { cpuList: options.cpuList } : {}) });
  try {
    const { stdout } = await tessera.process.tessera(['admin-tokens', 'create', '--name', 'bench', '--scope', 'tokens:revoke', '--scope', 'audit:read', '--json']);
    const adminToken = (JSON.parse(stdout) as { admin_token: string }).admin_token;
    const admin = (path: string, method = 'GET') => tessera.process.adminRequest(path, { method, headers: { authorization: `Bearer ${adminToken}` } });
    const rssMb = async () => (await metrics(tessera))('tessera_process_resident_memory_bytes') / 1e6;

    // 1. The log grows live under the running server: chunks of 100 k events in its own file.
    const file = join(tessera.process.dataDir, 'events.db');
    const now = Math.floor(Date.now() / 1000);
    progress(`scale: writing ${options.events} events into the running server's log (${options.bigFamilies} families of one account, ${options.liveFamilies} live)`);
    const growStarted = performance.now();
    let written = 0;
    for (const chunk of chunks(longLog(options, now), 100_000)) {
      writeBulkLog(file, chunk);
      written += chunk.length;
      if (written % 500_000 < 100_000) progress(`scale: ${written} events written`);
    }
    const growSeconds = (performance.now() - growStarted) / 1000;
    const head = (await metrics(tessera))('tessera_event_store_head_position');
    progress(`scale: log at position ${head}; waiting for the audit index (the read models on the request thread read only their own event types, and are ready)`);
    const caughtUpStarted = performance.now();
    for (;;) {
      const read = await metrics(tessera);
      const ready = (await tessera.process.adminRequest('/readyz')).status === 200;
      if (ready && read('tessera_audit_index_position') >= head) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const caughtUpSeconds = (performance.now() - caughtUpStarted) / 1000;
    const logBytes = statSync(file).size;
    const rssMbBefore = await rssMb();
    progress(`scale: caught up in ${caughtUpSeconds.toFixed(0)} s after ${growSeconds.toFixed(0)} s of writing; RSS ${rssMbBefore.toFixed(0)} MB`);

    // 2. The maximum, then 70% of it alone and with the admin work beside.
    await warmUp(issueTarget(tessera), { seconds: options.warmupSeconds, connections: options.connections });
    const maxIssuance = await load(issueTarget(tessera), { seconds: options.seconds, connections: options.connections });
    const offeredRate = Math.round(maxIssuance.reqPerSec * 0.7);
    progress(`scale: maximum ${maxIssuance.reqPerSec.toFixed(0)} issuances/s; offering ${offeredRate}/s`);
    const answers: AdminAnswer[] = [];
    const at = new Date(now * 1000).toISOString();
    let firstRevoke: AdminAnswer | undefined;
    const pairs: { alone: IssuanceWindow; beside: IssuanceWindow; besideFirst: boolean }[] = [];
    // The first revoke-tokens on a cold families model, in the first window beside; later windows retry it while it answers 503.
    const adminWork = async (running: () => boolean) => {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      if (firstRevoke === undefined) {
        firstRevoke = await timed('first revoke-tokens, cold families model', () => admin(`/admin/v1/accounts/${bigAccount}/revoke-tokens`, 'POST'));
        answers.push(firstRevoke);
      }
      let revoked = answers.some((answer) => answer.what.includes('revoke-tokens') && answer.status === 200);
      while (running()) {
        answers.push(await timed('access-at, largest account, first page', () => admin(`/admin/v1/accounts/${bigAccount}/access-at?at=${at}`)));
        answers.push(await timed('events, largest account, first page', () => admin(`/admin/v1/events?account=${bigAccount}`)));
        answers.push(await timed('events, largest account, its revocations', () => admin(`/admin/v1/events?account=${bigAccount}&type=TokenRevoked&limit=1000`)));
        if (!revoked) {
          const again = await timed('revoke-tokens again (503 before)', () => admin(`/admin/v1/accounts/${bigAccount}/revoke-tokens`, 'POST'));
          answers.push(again);
          revoked = again.status === 200;
        }
      }
    };
    for (let pair = 1; pair <= options.windowPairs; pair += 1) {
      // In turn both ways, as the http part's pairs: a window's place in the pair must not favour either side.
      const besideFirst = pair % 2 === 0;
      const measure = async (side: 'alone' | 'beside'): Promise<IssuanceWindow> => {
        const taken = side === 'alone' ? await window(tessera, offeredRate, options) : await window(tessera, offeredRate, options, adminWork);
        progress(`scale: window pair ${pair}: ${side === 'alone' ? 'alone' : 'beside admin work'} p99 ${taken.load.latencyP99Ms} ms, event loop p99 ${taken.eventLoopP99Ms.toFixed(1)} ms, ${gcLine(taken.gc)}`);
        return taken;
      };
      if (besideFirst) {
        const beside = await measure('beside');
        const alone = await measure('alone');
        pairs.push({ alone, beside, besideFirst });
      } else {
        const alone = await measure('alone');
        const beside = await measure('beside');
        pairs.push({ alone, beside, besideFirst });
      }
    }

    // 3. access-at's first page on the index grown live, without a restart.
    const accessAtFirstPage: AdminAnswer[] = [];
    for (const [what, accountId] of [
      ['access-at first page, a small account', 'acct-scale-7'],
      ['access-at first page, the largest account', bigAccount],
      ['access-at first page, the bench account (grown by the load)', tessera.credentials.account_id],
    ] as const) {
      for (let repeat = 0; repeat < 3; repeat += 1) accessAtFirstPage.push(await timed(what, () => admin(`/admin/v1/accounts/${accountId}/access-at?at=${new Date().toISOString()}`)));
    }
    const old = new Date((now - 35 * day) * 1000).toISOString();
    accessAtFirstPage.push(await timed('access-at first page, largest account, 35 days ago', () => admin(`/admin/v1/accounts/${bigAccount}/access-at?at=${old}`)));
    return {
      events: written,
      logBytes,
      growSeconds,
      caughtUpSeconds,
      rssMbBefore,
      rssMbAfter: await rssMb(),
      maxIssuance,
      offeredRate,
      pairs,
      admin: answers,
      firstRevoke: firstRevoke ?? { what: 'first revoke-tokens', status: 0, ms: Number.NaN },
      accessAtFirstPage,
    };
  } finally {
    await tessera.stop();
  }
}

const gcLine = (gc: IssuanceWindow['gc']) => `main-thread GC ${gc.pauses} pauses, ${gc.ms.toFixed(0)} ms, ${gc.over10Ms} over 10 ms`;

export function describeScale(result: ScaleResult): string {
  const byWhat = new Map<string, AdminAnswer[]>();
  for (const answer of result.admin) byWhat.set(answer.what, [...(byWhat.get(answer.what) ?? []), answer]);
  const admin = [...byWhat].map(([what, list]) => `  ${what}: ${list.length}×, statuses ${[...new Set(list.map((a) => a.status))].join('/')}, max ${Math.max(...list.map((a) => a.ms)).toFixed(0)} ms`);
  return [
    `scale: ${result.events} events written live (${result.growSeconds.toFixed(0)} s), audit index caught up ${result.caughtUpSeconds.toFixed(0)} s later; log ${(result.logBytes / 1e9).toFixed(2)} GB; RSS ${result.rssMbBefore.toFixed(0)} → ${result.rssMbAfter.toFixed(0)} MB`,
    `  issuance maximum ${result.maxIssuance.reqPerSec.toFixed(0)}/s; offered ${result.offeredRate}/s, ${result.pairs.length} window pairs in turn:`,
    ...result.pairs.map(
      ({ alone, beside, besideFirst }, index) =>
        `    pair ${index + 1}${besideFirst ? ' (beside first)' : ''}: alone p99 ${alone.load.latencyP99Ms} ms (event loop p99 ${alone.eventLoopP99Ms.toFixed(1)} ms; ${gcLine(alone.gc)}), ` +
        `beside admin work p99 ${beside.load.latencyP99Ms} ms (event loop p99 ${beside.eventLoopP99Ms.toFixed(1)} ms; ${gcLine(beside.gc)})`,
    ),
    ...admin,
    ...result.accessAtFirstPage.map((a) => `  ${a.what}: ${a.status} in ${a.ms.toFixed(0)} ms`),
  ].join('\n');
}

export function scaleRows(result: ScaleResult): Row[] {
  const aloneP99 = median(result.pairs.map((pair) => pair.alone.load.latencyP99Ms));
  const besideP99 = median(result.pairs.map((pair) => pair.beside.load.latencyP99Ms));
  const aloneLoop = median(result.pairs.map((pair) => pair.alone.eventLoopP99Ms));
  const besideLoop = median(result.pairs.map((pair) => pair.beside.eventLoopP99Ms));
  const move = besideP99 / aloneP99 - 1;
  const moveMet = atMost(move * 100, 10, ' %');
  const loopMet = atMost(besideLoop, 20, ' ms');
  const slowestPage = Math.max(...result.accessAtFirstPage.map((a) => a.ms));
  const pageMet = atMost(slowestPage, 200, ' ms');
  const revokeBound = result.firstRevoke.status === 200 || result.firstRevoke.status === 503;
  const non2xx = result.pairs.reduce((sum, { alone, beside }) => sum + alone.load.non2xx + beside.load.non2xx + alone.load.errors + beside.load.errors, 0);
  return [
    {
      what: `scale (${(result.events / 1e6).toFixed(1)} M events): issuance p99 at ${result.offeredRate}/s (70% of max), alone → beside admin work, median of ${result.pairs.length} pairs, ms`,
      tessera: `${aloneP99} → ${besideP99}`,
      peer: '—',
      ratio: 1 + move,
      target: '≤ +10%',
      met: moveMet.met && non2xx === 0,
      distance: `${moveMet.distance}${non2xx === 0 ? '' : `; ${non2xx} non-2xx or errors`}`,
    },
    { what: '  event-loop delay p99 beside admin work, median, ms (alone)', tessera: `${besideLoop.toFixed(1)} (${aloneLoop.toFixed(1)})`, peer: '—', ratio: '—', target: '≤ 20 ms', ...loopMet },
    { what: '  access-at first page on the index grown live, slowest, ms', tessera: slowestPage, peer: '—', ratio: '—', target: '≤ 200 ms', ...pageMet },
    {
      what: '  first revoke-tokens on a cold families model (600 k families)',
      tessera: `${result.firstRevoke.status} in ${result.firstRevoke.ms.toFixed(0)} ms`,
      peer: '—',
      ratio: '—',
      target: '200 or 503 within its bound',
      met: revokeBound && result.firstRevoke.ms <= 2_500,
      distance: revokeBound ? '' : `answered ${result.firstRevoke.status}`,
    },
  ];
}
