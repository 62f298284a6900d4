/**
 * `npm run bench -- console`: the admin console's pages on a large log, over HTTPS against the real
 * server (`tessera start`), each page timed as the page makes its admin calls.
 *
 * 1. A data folder: `tessera start` once on an empty folder (it makes its keys and schema), an
 *    admin token with every scope and a Shared Signals receiver made with the CLI, then stopped.
 * 2. The log filled by direct inserts (account-log-fixture.ts): BENCH_CONSOLE_EVENTS events over
 *    BENCH_CONSOLE_ACCOUNTS accounts in October 2026, then BENCH_CONSOLE_LIVE_FAMILIES families
 *    issued now for each of the first five accounts: live families, so the families page has work.
 * 3. `tessera start` on that folder, its audit index deleted so it is rebuilt from the whole log:
 *    how long until /readyz says ready, and until the audit route and the families route answer
 *    200 (both answer 503 while their threads catch up; the families thread starts on first call).
 * 4. Each page view, BENCH_CONSOLE_SAMPLES times after 20 unmeasured ones, one at a time over one
 *    kept-alive connection with the admin token, as a browser holds one: the worst cases are the
 *    search that matches nothing (it looks at the whole account budget), the last page of accounts,
 *    the families of an account with the most live families, its audit timeline and access-at now.
 */
import { Agent, request } from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { auditIndexFile } from '@tessera/audit';
import { adminScopes } from '@tessera/events';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';
import { seededRandom, writeAccountLog, writeLiveFamilies, type FixtureAccount } from './account-log-fixture.js';
import { onCleanup, progress } from './children.js';
import { atMost, type Row } from './report.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const targetMs = 300;
/** The accounts given live families, the first of them the account the families and audit pages are timed on. */
const liveFamilyAccounts = 5;

interface LatencySummary {
  readonly samples: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** One view of a page: the admin calls it makes, one after the other, and what each answered. */
export interface ViewResult extends LatencySummary {
  readonly page: string;
  readonly view: string;
  readonly routes: readonly (LatencySummary & { readonly path: string; readonly bytes: number })[];
}

export interface ConsoleResult {
  readonly events: number;
  readonly accounts: number;
  readonly liveFamiliesPerAccount: number;
  readonly logSetupSeconds: number;
  readonly logFileBytes: number;
  readonly readySeconds: number;
  /** From the start of `tessera start`. */
  readonly auditCaughtUpSeconds: number;
  /** From the families route's first call, which starts the families thread. */
  readonly familiesCaughtUpSeconds: number;
  readonly views: readonly ViewResult[];
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

function summary(timesMs: readonly number[]): LatencySummary {
  const sorted = [...timesMs].sort((a, b) => a - b);
  return { samples: sorted.length, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: sorted[sorted.length - 1] ?? Number.NaN };
}

/** A browser's view of the admin listener: one kept-alive TLS connection, the data folder's certificate trusted, the admin token sent. */
function adminClient(tessera: TesseraProcess, adminToken: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: readFileSync(join(tessera.dataDir, 'tls', 'self-signed.crt')) });
  const get = (path: string): Promise<{ status: number; body: string }> =>
    new Promise((resolveAnswer, reject) => {
      const outgoing = request(new URL(path, tessera.adminUrl), { agent, headers: { authorization: `Bearer ${adminToken}` } }, (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => resolveAnswer({ status: incoming.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        incoming.on('error', reject);
      });
      outgoing.setTimeout(60_000, () => outgoing.destroy(new Error(`GET ${path}: no answer within 60 s`)));
      outgoing.on('error', reject);
      outgoing.end();
    });
  return { get, close: () => agent.destroy() };
}
type AdminClient = ReturnType<typeof adminClient>;

async function answered(client: AdminClient, path: string): Promise<string> {
  const answer = await client.get(path);
  if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  return answer.body;
}

/** Seconds from `since` until `path` answers 200 (503 while a thread catches up), polled every 200 ms. */
async function secondsUntilServed(client: AdminClient, path: string, since: bigint): Promise<number> {
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    const answer = await client.get(path);
    if (answer.status === 200) return Number(process.hrtime.bigint() - since) / 1e9;
    if (answer.status !== 503 || Date.now() > deadline) throw new Error(`GET ${path} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
    await sleep(200);
  }
}

/** Times a page view: its calls one after the other (a page waits for one answer before it draws), `samples` times after 20 unmeasured. */
async function timeView(client: AdminClient, page: string, view: string, paths: readonly string[], samples: number): Promise<ViewResult> {
  for (let i = 0; i < 20; i += 1) for (const path of paths) await answered(client, path);
  const totals: number[] = [];
  const perRoute = paths.map(() => [] as number[]);
  const bytes = paths.map(() => 0);
  for (let i = 0; i < samples; i += 1) {
    let total = 0;
    for (const [n, path] of paths.entries()) {
      const began = process.hrtime.bigint();
      const body = await answered(client, path);
      const ms = Number(process.hrtime.bigint() - began) / 1e6;
      perRoute[n]!.push(ms);
      bytes[n] = body.length;
      total += ms;
    }
    totals.push(total);
  }
  const result: ViewResult = { page, view, ...summary(totals), routes: paths.map((path, n) => ({ path, bytes: bytes[n]!, ...summary(perRoute[n]!) })) };
  progress(`console ${page}, ${view}: p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms, max ${result.maxMs.toFixed(1)} ms`);
  return result;
}

/** The cursor of the last page of accounts, followed from the first page by page as the console's button does (setup, not timed). */
async function lastAccountsCursor(client: AdminClient): Promise<string> {
  let cursor: string | undefined;
  for (;;) {
    const page = JSON.parse(await answered(client, `/admin/v1/accounts?limit=25${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`)) as { next_cursor: string | null };
    if (page.next_cursor === null) break;
    cursor = page.next_cursor;
  }
  if (cursor === undefined) throw new Error('the accounts fit on one page: no last page to reach by cursor');
  return cursor;
}

/** Step 1: keys, schema, an admin token with every scope and one receiver, by `tessera start` and the CLI. */
async function prepareDataFolder(dataDir: string): Promise<string> {
  // A log file of its own: the harness reads the ports from the first start line in the file.
  const tessera = await startTessera({ TESSERA_LOG_LEVEL: 'warn' }, { dataDir, keepData: true, logFile: join(dataDir, 'tessera-setup.log') });
  try {
    const created = await tessera.tessera(['admin-tokens', 'create', '--name', 'bench', ...adminScopes.flatMap((scope) => ['--scope', scope]), '--json']);
    // The CLI's documented answer: { admin_token, id }.
    const adminToken = (JSON.parse(created.stdout) as { admin_token: string }).admin_token;
    // The receiver's token is shown once and not needed: the signals page lists receivers and their streams.
    await tessera.tessera(['ssf-receivers', 'create', '--name', 'bench receiver', '--json']);
    return adminToken;
  } finally {
    await tessera.stop();
  }
}

export async function measureConsole(): Promise<ConsoleResult> {
  const events = env('BENCH_CONSOLE_EVENTS', 1_000_000);
  const accountCount = env('BENCH_CONSOLE_ACCOUNTS', 10_000);
  const liveFamilies = env('BENCH_CONSOLE_LIVE_FAMILIES', 2000);
  const samples = env('BENCH_CONSOLE_SAMPLES', 200);
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-bench-console-'));
  const forget = onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));
  try {
    progress('console: a data folder (tessera start once, an admin token with every scope, a receiver)');
    const adminToken = await prepareDataFolder(dataDir);
    const fixture = writeAccountLog(join(dataDir, 'events.db'), { events, accounts: accountCount, next: seededRandom(12), log: progress });
    const busy: readonly FixtureAccount[] = fixture.accounts.slice(0, liveFamilyAccounts);
    writeLiveFamilies(join(dataDir, 'events.db'), busy, liveFamilies, Date.now());
    // The index of the setup start reflects a few events, and a running server never falls a
    // million behind it: deleted (as docs/audit.md says to force a rebuild), the server rebuilds
    // it from the whole log in one bulk load, as on a fresh replica. Left behind, it caught up in
    // short live batches, several times slower.
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${auditIndexFile(dataDir)}${suffix}`, { force: true });
    progress(`console: ${events} events over ${accountCount} accounts written in ${fixture.seconds.toFixed(1)} s (setup), then ${liveFamilies} live families for each of ${busy.length} accounts`);

    const started = process.hrtime.bigint();
    const tessera = await startTessera({ TESSERA_LOG_LEVEL: process.env.BENCH_TESSERA_LOG_LEVEL ?? 'info' }, { dataDir, keepData: true, logFile: join(dataDir, 'tessera.log'), readyWithinMs: 15 * 60_000 });
    const stopServer = onCleanup(() => tessera.signal('SIGKILL'));
    const client = adminClient(tessera, adminToken);
    try {
      const readySeconds = Number(process.hrtime.bigint() - started) / 1e9;
      const account = busy[0]!.accountId;
      const familiesPath = `/admin/v1/accounts/${account}/families?limit=50`;
      const timelinePath = `/admin/v1/events?account=${account}&limit=50`;
      const auditCaughtUpSeconds = await secondsUntilServed(client, timelinePath, started);
      // The families thread starts on the route's first call: its catch-up is timed from that call.
      const familiesCaughtUpSeconds = await secondsUntilServed(client, familiesPath, process.hrtime.bigint());
      progress(`console: ready in ${readySeconds.toFixed(1)} s; the audit route answered 200 at ${auditCaughtUpSeconds.toFixed(1)} s, the families route ${familiesCaughtUpSeconds.toFixed(1)} s after its first call`);

      const lastCursor = await lastAccountsCursor(client);
      const receivers = JSON.parse(await answered(client, '/admin/v1/ssf/receivers')) as { receivers: { receiver_id: string }[] };
      const views: [string, string, string[]][] = [
        ['page and assets', '/console/, console.js, console.css', ['/console/', '/console/assets/console.js', '/console/assets/console.css']],
        ['accounts', 'first page', ['/admin/v1/accounts?limit=25']],
        ['accounts', `search q matching nothing (looks at all ${accountCount})`, ['/admin/v1/accounts?q=no-such-shop-anywhere&limit=25']],
        ['accounts', 'the last page, by cursor', [`/admin/v1/accounts?limit=25&cursor=${encodeURIComponent(lastCursor)}`]],
        ['accounts', 'one account', [`/admin/v1/accounts/${account}`]],
        ['families', `${liveFamilies} live families, first page of 50`, [familiesPath]],
        ['audit', 'timeline of the busiest account, 50 events', [timelinePath]],
        ['audit', 'timeline of the whole log, 50 events', ['/admin/v1/events?limit=50']],
        ['audit', `access-at now (${liveFamilies} usable families)`, [`/admin/v1/accounts/${account}/access-at?at=${encodeURIComponent(new Date().toISOString())}`]],
        ['shared signals', 'receivers and their streams', ['/admin/v1/ssf/receivers', ...receivers.receivers.map((receiver) => `/admin/v1/ssf/receivers/${receiver.receiver_id}/streams`)]],
        ['archive and keys', 'archive status, archive keys, signing keys', ['/admin/v1/archive/status', '/admin/v1/archive/keys', '/admin/v1/signing-keys']],
      ];
      const measured: ViewResult[] = [];
      for (const [page, view, paths] of views) measured.push(await timeView(client, page, view, paths, samples));
      return {
        events,
        accounts: accountCount,
        liveFamiliesPerAccount: liveFamilies,
        logSetupSeconds: fixture.seconds,
        logFileBytes: fixture.bytes,
        readySeconds,
        auditCaughtUpSeconds,
        familiesCaughtUpSeconds,
        views: measured,
      };
    } finally {
      client.close();
      await tessera.stop();
      stopServer();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    forget();
  }
}

const latency = (s: LatencySummary) => `${s.p50Ms.toFixed(1)} / ${s.p99Ms.toFixed(1)} / ${s.maxMs.toFixed(1)}`;
const sizeOf = (events: number) => (events === 1_000_000 ? '1M' : String(events));

/** One row a page, judged on the p99 of its slowest view (max shown beside it); its other views below it, not judged. */
export function consoleRows(result: ConsoleResult): Row[] {
  const pages = [...new Set(result.views.map((view) => view.page))];
  return pages.flatMap((page) => {
    const views = result.views.filter((view) => view.page === page).sort((a, b) => b.p99Ms - a.p99Ms);
    const worst = views[0]!;
    return [
      { what: `console: ${page} (${worst.view}), p50 / p99 / max ms (${sizeOf(result.events)} events)`, tessera: latency(worst), peer: '—', ratio: '—', target: `p99 ≤ ${targetMs}`, ...atMost(worst.p99Ms, targetMs, ' ms') },
      ...views.slice(1).map((view): Row => ({ what: `  ${view.view}`, tessera: latency(view), peer: '—', ratio: '—', target: '', met: '—' })),
    ];
  });
}

export function describeConsole(result: ConsoleResult): string {
  return [
    `admin console: ${result.events} events over ${result.accounts} accounts (log ${(result.logFileBytes / 1e6).toFixed(0)} MB, written directly in ${result.logSetupSeconds.toFixed(1)} s as setup) ` +
      `and ${result.liveFamiliesPerAccount} live families for each of ${liveFamilyAccounts} accounts; tessera start ready in ${result.readySeconds.toFixed(1)} s, ` +
      `the audit route served at ${result.auditCaughtUpSeconds.toFixed(1)} s, the families route ${result.familiesCaughtUpSeconds.toFixed(1)} s after its first call; ` +
      `each view timed ${result.views[0]?.samples ?? 0} times over one kept-alive HTTPS connection (p50 / p99 / max ms, bytes):`,
    ...result.views.flatMap((view) => view.routes.map((route) => `  ${view.page}, ${view.view}: GET ${route.path.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '{id}')} ${latency(route)} ms, ${route.bytes} B`)),
  ].join('\n');
}
