/**
 * Child process (node --import tsx): the audit index. Prints one JSON line
 * with the results.
 *
 * 1. Fixture (setup, timed apart): a temp SQLite log in the adapter's own schema (made by opening
 *    a SqliteEventStore on it), filled by direct inserts (account-log-fixture.ts): BENCH_AUDIT_EVENTS
 *    events over BENCH_AUDIT_ACCOUNTS accounts over 30 days.
 * 2. Rebuild: a fresh index file fed from the log by followIntoIndex, the path a server takes;
 *    timed from open to caught up and written.
 * 3. Queries through the real admin routes (fastify inject(), JSON serialization included), with
 *    the index as the rebuild left it: `GET /admin/v1/events?account=` (first page, the default
 *    100) for random accounts, and `GET /admin/v1/accounts/{id}/access-at?at=` a second after a
 *    random token event (an instant when the account held a token).
 *
 * env: BENCH_AUDIT_EVENTS (1000000), BENCH_AUDIT_ACCOUNTS (10000), BENCH_AUDIT_SAMPLES (500).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { auditRoutes } from '@tessera/admin';
import { AuditIndex, followIntoIndex } from '@tessera/audit';
import { SqliteEventStore } from '@tessera/event-store-sqlite';
import { createMetrics, createReadiness } from '@tessera/host';
import { buildApp } from '@tessera/server';
import { systemClock } from '@tessera/timing';
import { seededRandom, writeAccountLog } from './account-log-fixture.js';

const events = Number(process.env.BENCH_AUDIT_EVENTS ?? 1_000_000);
const accountCount = Number(process.env.BENCH_AUDIT_ACCOUNTS ?? 10_000);
const samples = Number(process.env.BENCH_AUDIT_SAMPLES ?? 500);

function log(message: string): void {
  process.stderr.write(`[audit ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

const next = seededRandom(12);

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}
function summary(timesMs: number[]) {
  const sorted = [...timesMs].sort((a, b) => a - b);
  return { samples: sorted.length, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: sorted[sorted.length - 1] ?? Number.NaN };
}

const dir = mkdtempSync(join(tmpdir(), 'tessera-bench-audit-'));
// The log and the index are ~1.3 GB: gone before the result is printed (the parent stops this
// process once it has read it), on the parent's SIGTERM (a failed bench), and on Ctrl-C, which
// the terminal sends this process too. The default action of either signal would end the process
// in the middle of the removal.
const removeFolder = () => rmSync(dir, { recursive: true, force: true });
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    removeFolder();
    process.exit(signal === 'SIGTERM' ? 143 : 130);
  });
}
try {
  const logFile = join(dir, 'events.db');
  // The adapter makes its own schema; the fixture then writes rows into it directly.
  await new SqliteEventStore({ file: logFile }).close();
  const fixture = writeAccountLog(logFile, { events, accounts: accountCount, next, log });
  log(`log: ${events} events over ${accountCount} accounts written in ${fixture.seconds.toFixed(1)} s (setup), ${(fixture.bytes / 1e6).toFixed(0)} MB`);

  const store = new SqliteEventStore({ file: logFile });
  const indexFile = join(dir, 'audit-index.db');
  const rebuildStart = process.hrtime.bigint();
  const index = AuditIndex.open(indexFile);
  const follower = followIntoIndex(store, index, { onError: (error) => log(`index failed: ${String(error)}`) });
  await follower.caughtUp;
  const rebuildSeconds = Number(process.hrtime.bigint() - rebuildStart) / 1e9;
  await follower.close();
  const indexBytes = statSync(indexFile).size + statSync(`${indexFile}-wal`).size;
  log(`index: rebuilt in ${rebuildSeconds.toFixed(1)} s (${(events / rebuildSeconds).toFixed(0)} events/s), ${(indexBytes / 1e6).toFixed(0)} MB with its WAL, at position ${index.position()}`);

  const app = await buildApp({
    logLevel: 'silent',
    readiness: createReadiness(),
    metrics: createMetrics(),
    // The admin-token check is another package's; the bench measures the queries behind it.
    routes: [auditRoutes({ audit: { unavailable: () => undefined, events: async (q) => index.events(q), accessAt: async (a, at, q) => index.accessAt(a, at, q), archivePins: () => undefined }, requireScope: () => async () => undefined, now: () => systemClock.now() })],
  });
  const db = new Database(logFile, { readonly: true });
  const accountIds = db.prepare<[], { id: string }>("SELECT json_extract(payload, '$.accountId') AS id FROM events WHERE type = 'AccountRegistered'").all().map((row) => row.id);
  // access-at is asked a second after a random token event of the account: an instant when it held at least one token.
  const tokenEvent = db.prepare<[number], { account: string; recordedAt: number }>(
    "SELECT json_extract(payload, '$.accountId') AS account, recorded_at AS recordedAt FROM events WHERE position >= ? AND type IN ('TokenIssued', 'TokenRotated', 'LegacyTokenIssued') ORDER BY position LIMIT 1",
  );
  const instants = Array.from({ length: samples + 20 }, () => tokenEvent.get(1 + Math.floor(next() * (events - 100)))!);
  db.close();
  const pick = () => accountIds[Math.floor(next() * accountIds.length)]!;
  const timed = async (url: string, check: (body: string) => void): Promise<number> => {
    const began = process.hrtime.bigint();
    const answer = await app.inject({ method: 'GET', url });
    const ms = Number(process.hrtime.bigint() - began) / 1e6;
    if (answer.statusCode !== 200) throw new Error(`${url} answered ${answer.statusCode}: ${answer.body.slice(0, 300)}`);
    check(answer.body);
    return ms;
  };
  // A few unmeasured requests first: the JIT and the statement cache.
  for (let i = 0; i < 20; i += 1) await timed(`/admin/v1/events?account=${pick()}`, () => undefined);
  let rows = 0;
  const eventsTimes: number[] = [];
  for (let i = 0; i < samples; i += 1) {
    eventsTimes.push(await timed(`/admin/v1/events?account=${pick()}`, (body) => void (rows += (JSON.parse(body) as { events: unknown[] }).events.length)));
  }
  let usable = 0;
  const accessTimes: number[] = [];
  for (const [i, { account, recordedAt }] of instants.entries()) {
    const at = new Date(recordedAt + 1000).toISOString();
    const ms = await timed(`/admin/v1/accounts/${account}/access-at?at=${at}`, (body) => {
      const answer = JSON.parse(body) as { families: unknown[]; legacy_tokens: unknown[] };
      usable += answer.families.length + answer.legacy_tokens.length;
    });
    if (i >= 20) accessTimes.push(ms);
  }
  await app.close();
  index.close();
  await store.close();
  const result = {
    events,
    accounts: accountCount,
    logSetupSeconds: fixture.seconds,
    logFileBytes: fixture.bytes,
    rebuildSeconds,
    indexFileBytes: indexBytes,
    eventsByAccount: { ...summary(eventsTimes), rowsPerPage: rows / samples },
    accessAt: { ...summary(accessTimes), usablePerAnswer: usable / (samples + 20) },
  };
  log(`events?account= first page: p50 ${result.eventsByAccount.p50Ms.toFixed(2)} ms, p99 ${result.eventsByAccount.p99Ms.toFixed(2)} ms, max ${result.eventsByAccount.maxMs.toFixed(2)} ms`);
  log(`access-at: p50 ${result.accessAt.p50Ms.toFixed(2)} ms, p99 ${result.accessAt.p99Ms.toFixed(2)} ms, max ${result.accessAt.maxMs.toFixed(2)} ms`);
  removeFolder();
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  removeFolder();
}
