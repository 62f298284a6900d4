/**
 * `npm run bench -- storage`: what the log, the audit index and the archive cost on disk, and what
 * the archive answers cost in time.
 *
 * 1. Bytes per issuance, per refresh and per revocation, for the log and for the audit index, each
 *    file measured after a WAL checkpoint, on the real server (`tessera start`) over HTTPS.
 * 2. The disk curve under constant load on the real server with short windows (a hot window of
 *    BENCH_STORAGE_HOT_SECONDS): log, index and archive sampled every few seconds; and issuance p99
 *    at that rate with archiving and without.
 * 3. A simulated month: BENCH_STORAGE_DAYS days at BENCH_STORAGE_RATE issuances/s on a simulated
 *    clock, through the real store's rows, the real audit index and the real archiver with the
 *    default windows (hot 14 days), one archiving run per simulated hour: the hot log and index
 *    plateau, the archive grows by compressed bytes only; and how fast the archiver moves events.
 * 4. A 12-month archive at BENCH_ARCHIVE_RATE issuances/s written through the archive writer (one
 *    segment per simulated day, signed into the manifest), then the audit queries across it:
 *    an account's first page over 12 months, and access-at 11 months ago.
 * 5. What an appended issuance costs the log's writer with random ids and with the store's
 *    time-ordered ones, on a log of a million issuances (measureIdShapes).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  appendEntry,
  ArchiveReader,
  liveSegments,
  sha256,
  TrustedArchive,
  type StoredEntry,
  loadOrCreateArchiveKey,
  readManifest,
  segmentEntryBody,
  segmentFileName,
  segmentsDir,
  writeSegment,
  type ArchivedEvent,
} from '@tessera/archive';
import { Archiver, archiveTrustIn } from '@tessera/archiving';
import { AuditIndex, AuditQueries, catchUpIndex } from '@tessera/audit';
import { SqliteEventStore, SqliteLogRetention } from '@tessera/event-store-sqlite';
import { newEventId } from '@tessera/event-store';
import { newFamilyId } from '@tessera/tokens';
import type { EventMetadata, TesseraEvent } from '@tessera/events';
import { progress } from './children.js';
import { load, type LoadResult } from './load.js';
import { atMost, type Row } from './report.js';
import { issueTarget, preIssueRefreshTokens, startTesseraTarget, type TesseraTarget } from './tessera-target.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

/** An event with its stream and the time the simulated clock says it was recorded. */
interface BulkEntry {
  readonly stream: string;
  readonly event: TesseraEvent;
  readonly recordedAt: number;
  readonly metadata?: EventMetadata;
}

/**
 * Appends the rows the store's writer would, in one transaction, at the simulated time: a month
 * at 2 issuances/s is 5 million appends, which the HTTP path would take days to make. The file is
 * made by the store itself first, so it has the store's schema and pragmas.
 */
function writeRows(file: string, entries: readonly BulkEntry[], eventId: () => string = randomUUID): void {
  if (!existsSync(file)) {
    const store = new SqliteEventStore({ file });
    void store.close();
  }
  const db = new Database(file);
  try {
    db.pragma('busy_timeout = 5000');
    // Every stream the simulation writes is new (a family per issuance, one account): revision 0.
    const insert = db.prepare('INSERT INTO events (event_id, stream, revision, type, payload, metadata, recorded_at) VALUES (?, ?, 0, ?, ?, ?, ?)');
    db.transaction(() => {
      for (const { stream, event, recordedAt, metadata } of entries) insert.run(eventId(), stream, event.type, JSON.stringify(event), JSON.stringify(metadata ?? {}), recordedAt);
    })();
  } finally {
    db.close();
  }
}

export interface StorageResult {
  readonly perOperation: { readonly issuances: number; readonly refreshes: number; readonly revocations: number; readonly log: PerOperation; readonly index: PerOperation; readonly issuedPerSecond: number };
  readonly curve: { readonly rate: number; readonly hotSeconds: number; readonly samples: readonly CurveSample[]; readonly withArchiving: LoadResult; readonly withoutArchiving: LoadResult };
  readonly month: { readonly days: number; readonly rate: number; readonly daily: readonly DaySample[]; readonly archiverEventsPerSecond: number; readonly archiveBytesPerIssuance: number };
  /** The log's writer per appended issuance, by the shape of the ids the log indexes (part 5). */
  readonly ids: { readonly historyEvents: number; readonly appends: number; readonly shapes: readonly IdShapeCost[] };
  readonly year: { readonly months: number; readonly rate: number; readonly events: number; readonly bytes: number; readonly segments: number; readonly writeSeconds: number; readonly queries: readonly QueryTime[] };
}

interface PerOperation {
  readonly issuance: number;
  readonly refresh: number;
  readonly revocation: number;
}
interface CurveSample {
  readonly second: number;
  readonly logBytes: number;
  readonly indexBytes: number;
  readonly archiveBytes: number;
}
interface DaySample {
  readonly day: number;
  readonly logBytes: number;
  readonly indexBytes: number;
  readonly archiveBytes: number;
  readonly hotEvents: number;
}
interface IdShapeCost {
  readonly shape: 'random' | 'time-ordered';
  readonly group: number;
  /** The bench process's CPU (its main thread and the store's writer thread) per append, µs. */
  readonly cpuMicros: number;
  readonly wallMicros: number;
}
interface QueryTime {
  readonly what: string;
  readonly ms: number;
  readonly rows: number;
}

const fileBytes = (file: string) => (existsSync(file) ? statSync(file).size : 0);
const folderBytes = (folder: string): number =>
  existsSync(folder) ? readdirSync(folder, { withFileTypes: true }).reduce((sum, entry) => sum + (entry.isDirectory() ? folderBytes(join(folder, entry.name)) : fileBytes(join(folder, entry.name))), 0) : 0;

/** The file's size once its WAL has been copied into it (a checkpoint from a connection of our own). */
function checkpointedBytes(file: string): number {
  const db = new Database(file);
  try {
    db.pragma('busy_timeout = 5000');
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      if (result?.busy === 0) break;
    }
  } finally {
    db.close();
  }
  return fileBytes(file) + fileBytes(`${file}-wal`);
}

async function metric(target: TesseraTarget, name: string): Promise<number> {
  const text = (await target.process.adminRequest('/metrics')).text;
  return Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
}

/** Waits until the audit index reflects the log's head. */
async function indexed(target: TesseraTarget): Promise<void> {
  for (const deadline = performance.now() + 120_000; performance.now() < deadline; ) {
    if ((await metric(target, 'tessera_audit_index_position')) >= (await metric(target, 'tessera_event_store_head_position'))) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the audit index did not catch up');
}

/** Runs `work` over `items` with `parallel` requests in flight. */
async function inParallel<T>(items: readonly T[], parallel: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** Part 1: bytes per operation on the real server. */
async function measurePerOperation(): Promise<StorageResult['perOperation']> {
  const issuances = env('BENCH_STORAGE_ISSUANCES', 20_000);
  const target = await startTesseraTarget();
  try {
    const log = join(target.process.dataDir, 'events.db');
    const index = join(target.process.dataDir, 'audit-index.db');
    const sizes = async () => {
      await indexed(target);
      return { log: checkpointedBytes(log), index: checkpointedBytes(index) };
    };
    const start = await sizes();
    const started = performance.now();
    const refreshTokens = await preIssueRefreshTokens(target, { amount: issuances, connections: 20 });
    const issuedPerSecond = refreshTokens.length / ((performance.now() - started) / 1000);
    const issued = await sizes();
    const half = refreshTokens.slice(0, Math.floor(refreshTokens.length / 2));
    const kept: string[] = [];
    await inParallel(half, 20, async (token) => {
      const answer = await target.process.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: token });
      if (answer.status === 200) kept.push(String(answer.json().refresh_token));
    });
    const refreshed = await sizes();
    await inParallel(kept, 20, async (token) => {
      await target.process.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: token });
    });
    const revoked = await sizes();
    const per = (key: 'log' | 'index'): PerOperation => ({
      issuance: (issued[key] - start[key]) / refreshTokens.length,
      refresh: (refreshed[key] - issued[key]) / half.length,
      revocation: (revoked[key] - refreshed[key]) / kept.length,
    });
    return { issuances: refreshTokens.length, refreshes: half.length, revocations: kept.length, log: per('log'), index: per('index'), issuedPerSecond };
  } finally {
    await target.stop();
  }
}

/** Part 2: the disk under constant load, with a short hot window, and p99 with and without archiving. */
async function measureCurve(): Promise<StorageResult['curve']> {
  const rate = env('BENCH_STORAGE_RATE_LIVE', 100);
  const seconds = env('BENCH_STORAGE_SECONDS', 120);
  const hotSeconds = env('BENCH_STORAGE_HOT_SECONDS', 30);
  const short = { TESSERA_HOT_RETENTION: String(hotSeconds), TESSERA_ACCESS_TOKEN_TTL: '5', TESSERA_REFRESH_TOKEN_TTL: '10', TESSERA_CLOCK_SKEW: '1', TESSERA_ARCHIVE_INTERVAL: '5' };
  const run = async (archiving: boolean): Promise<{ result: LoadResult; samples: CurveSample[] }> => {
    // Without archiving: the same short token lives, a hot window longer than the run.
    const target = await startTesseraTarget({ env: archiving ? short : { ...short, TESSERA_HOT_RETENTION: '86400', TESSERA_AUDIT_RETENTION: '86400' } });
    const samples: CurveSample[] = [];
    const began = performance.now();
    const sample = () => {
      const folder = target.process.dataDir;
      samples.push({
        second: Math.round((performance.now() - began) / 1000),
        logBytes: fileBytes(join(folder, 'events.db')) + fileBytes(join(folder, 'events.db-wal')),
        indexBytes: fileBytes(join(folder, 'audit-index.db')) + fileBytes(join(folder, 'audit-index.db-wal')),
        archiveBytes: folderBytes(join(folder, 'archive')),
      });
    };
    const timer = setInterval(sample, 10_000);
    try {
      const result = await load(issueTarget(target), { seconds, connections: 10, overallRate: rate });
      sample();
      return { result, samples };
    } finally {
      clearInterval(timer);
      await target.stop();
    }
  };
  progress(`storage: ${seconds} s at ${rate} issuances/s without archiving`);
  const without = await run(false);
  progress(`storage: ${seconds} s at ${rate} issuances/s with a hot window of ${hotSeconds} s`);
  const withArchiving = await run(true);
  return { rate, hotSeconds, samples: withArchiving.samples, withArchiving: withArchiving.result, withoutArchiving: without.result };
}

const accounts = Array.from({ length: 1000 }, () => randomUUID());
const credentials = accounts.map(() => randomUUID());

/** One issuance as the issuer writes it: a family of its own, under one of 1000 accounts. */
function issuance(at: number, n: number, familyId = randomBytes(16).toString('base64url')): BulkEntry {
  const account = n % accounts.length;
  const seconds = Math.floor(at / 1000);
  return {
    stream: `tokenfamily-${familyId}`,
    event: {
      type: 'TokenIssued',
      v: 1,
      familyId,
      accountId: accounts[account]!,
      credentialId: credentials[account]!,
      apiLoginId: `tsl_${account.toString(36).padStart(22, '0')}`,
      generation: 0,
      refreshTokenHash: randomBytes(32).toString('base64url'),
      jti: randomBytes(16).toString('base64url'),
      scope: ['transaction:charge'],
      issuedAt: seconds,
      accessExpiresAt: seconds + 3600,
      refreshExpiresAt: seconds + 604_800,
    },
    recordedAt: at,
    metadata: { requestId: randomUUID(), accountId: accounts[account]!, sourceAddress: `10.0.${account % 4}.${account % 250}` },
  };
}

/** Part 3: a simulated month on the simulated clock, through the real rows, index and archiver. */
async function measureMonth(): Promise<StorageResult['month']> {
  const days = env('BENCH_STORAGE_DAYS', 30);
  const rate = env('BENCH_STORAGE_RATE', 2);
  const folder = mkdtempSync(join(tmpdir(), 'tessera-bench-month-'));
  const log = join(folder, 'events.db');
  const start = Date.parse('2026-01-01T00:00:00Z');
  try {
    writeRows(log, [{ stream: `account-${accounts[0]}`, event: { type: 'AccountRegistered', v: 1, accountId: accounts[0]!, name: 'bench', permissions: [], at: start / 1000 }, recordedAt: start }]);
    const store = new SqliteEventStore({ file: log, readOnly: true });
    const index = AuditIndex.open(join(folder, 'audit-index.db'));
    const retention = new SqliteLogRetention(log);
    const archiveDir = join(folder, 'archive');
    // The archive's anchors are appended at the simulated clock, as a server's store records them at its own.
    let runAt = start;
    const writer = new SqliteEventStore({ file: log, clock: { now: () => runAt } });
    const archiver = new Archiver({
      store,
      retention,
      index,
      archiveDir,
      keysDir: join(folder, 'keys'),
      settings: { hotWindowSeconds: 1_209_600, clockSkewSeconds: 60, auditRetentionSeconds: 34_560_000 },
      consumersPast: () => index.position(),
      trust: archiveTrustIn(store, async () => writer),
    });
    const daily: DaySample[] = [];
    let archiverSeconds = 0;
    const spent = { write: 0, index: 0 };
    let archived = 0;
    let n = 0;
    const perHour = rate * 3600;
    for (let hour = 0; hour < days * 24; hour += 1) {
      const hourStart = start + hour * 3_600_000;
      let mark = performance.now();
      writeRows(log, Array.from({ length: perHour }, (_, i) => issuance(hourStart + Math.floor((i * 3_600_000) / perHour), n++)));
      spent.write += (performance.now() - mark) / 1000;
      mark = performance.now();
      await catchUpIndex(index, store);
      spent.index += (performance.now() - mark) / 1000;
      const began = performance.now();
      runAt = hourStart + 3_600_000;
      const result = await archiver.run(runAt);
      // The archiver's speed at steady state: from its first run that moved anything (before, each
      // run finds nothing past the window yet, and its cost says nothing about keeping up).
      if (archived > 0 || result.archived > 0) archiverSeconds += (performance.now() - began) / 1000;
      archived += result.archived;
      if ((hour + 1) % 24 === 0) {
        const db = new Database(log, { readonly: true });
        const hotEvents = (db.prepare('SELECT count(*) FROM events').pluck().get() as number) ?? 0;
        db.close();
        const sample = { day: (hour + 1) / 24, logBytes: checkpointedBytes(log), indexBytes: checkpointedBytes(join(folder, 'audit-index.db')), archiveBytes: folderBytes(archiveDir), hotEvents };
        daily.push(sample);
        progress(
          `storage: simulated day ${sample.day}: log ${mb(sample.logBytes)}, index ${mb(sample.indexBytes)}, archive ${mb(sample.archiveBytes)}, ${sample.hotEvents} hot events; so far ${spent.write.toFixed(0)} s writing, ${spent.index.toFixed(0)} s indexing, ${archiverSeconds.toFixed(0)} s archiving`,
        );
      }
    }
    const segmentBytes = liveSegments(readManifest(archiveDir)).reduce((sum, entry) => sum + entry.segment.bytes, 0);
    index.close();
    await retention.close();
    await writer.close();
    await store.close();
    return { days, rate, daily, archiverEventsPerSecond: archived / archiverSeconds, archiveBytesPerIssuance: archived === 0 ? Number.NaN : segmentBytes / archived };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** An archived issuance, as the archiver writes it from the index's row. */
function archivedIssuance(position: bigint, at: number, account: number): ArchivedEvent {
  const familyId = randomBytes(16).toString('base64url');
  const seconds = Math.floor(at / 1000);
  return {
    position,
    stream: `tokenfamily-${familyId}`,
    revision: 0n,
    type: 'TokenIssued',
    time: at,
    accountId: accounts[account]!,
    familyId,
    generation: 0,
    reason: undefined,
    requestId: randomUUID(),
    sourceAddress: `10.0.${account % 4}.${account % 250}`,
    actor: undefined,
    apiLoginId: `tsl_${account.toString(36).padStart(22, '0')}`,
    apiId: undefined,
    access: { kind: 'generation-issued', familyId, generation: 0, credentialId: credentials[account]!, issuedAt: seconds, expiresAt: seconds + 3600 },
  };
}

/** Part 4: 12 months of archive through the writer, then the audit queries across it. */
async function measureYear(): Promise<StorageResult['year']> {
  const months = env('BENCH_ARCHIVE_MONTHS', 12);
  const rate = env('BENCH_ARCHIVE_RATE', 1);
  const days = Math.round(months * 30.4);
  const folder = mkdtempSync(join(tmpdir(), 'tessera-bench-year-'));
  const archiveDir = join(folder, 'archive');
  const start = Date.parse('2025-01-01T00:00:00Z');
  try {
    const key = loadOrCreateArchiveKey(join(folder, 'keys'), archiveDir);
    let position = 1n;
    let events = 0;
    let last: StoredEntry | undefined;
    const began = performance.now();
    const { mkdirSync } = await import('node:fs');
    mkdirSync(segmentsDir(archiveDir), { recursive: true });
    // One account issues one token in the year's last month only: the worst case for its first page.
    const rare = accounts.length - 1;
    for (let day = 0; day < days; day += 1) {
      const perDay = rate * 86_400;
      const rows: ArchivedEvent[] = [];
      for (let i = 0; i < perDay; i += 1) {
        const at = start + day * 86_400_000 + Math.floor((i * 86_400_000) / perDay);
        const account = day >= days - 30 && i === 0 ? rare : i % (accounts.length - 1);
        rows.push(archivedIssuance(position, at, account));
        position += 1n;
      }
      const sequence = day + 1;
      const facts = await writeSegment(join(archiveDir, segmentFileName(sequence)), rows);
      last = appendEntry(archiveDir, key, start + (day + 15) * 86_400_000, { kind: 'segment', segment: segmentEntryBody(segmentFileName(sequence), facts) }, last);
      events += rows.length;
      if (sequence % 30 === 0) progress(`storage: archive month ${sequence / 30}: ${events} events, ${mb(folderBytes(archiveDir))}`);
    }
    const writeSeconds = (performance.now() - began) / 1000;
    const bytes = liveSegments(readManifest(archiveDir)).reduce((sum, entry) => sum + entry.segment.bytes, 0);
    // The queries as the audit thread runs them: the hot index (empty here) and the archive together.
    const index = AuditIndex.open(':memory:');
    // Pinned as the log would pin it: the one key, and the head written last.
    const pins = { keys: new Set([key.fingerprint]), head: last === undefined ? undefined : { sequence: last.entry.sequence, sha256: sha256(last.bytes) }, source: 'the bench' };
    const queries = new AuditQueries(index, new ArchiveReader(new TrustedArchive(archiveDir, async () => pins)));
    const end = start + days * 86_400_000;
    const timed = async (what: string, run: () => Promise<number>): Promise<QueryTime> => {
      await run();
      const times: number[] = [];
      let rows = 0;
      for (let i = 0; i < 5; i += 1) {
        const t = performance.now();
        rows = await run();
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      return { what, ms: times[Math.floor(times.length / 2)]!, rows };
    };
    const queriesTimed: QueryTime[] = [
      await timed('events by account over 12 months, first page of 100', async () => (await queries.events({ account: accounts[7]!, types: [], limit: 100, since: start, until: end })).rows.length),
      await timed('events by account, its only events in the last month (every segment looked at)', async () => (await queries.events({ account: accounts[rare]!, types: [], limit: 100 })).rows.length),
      await timed('events by family over 12 months', async () => (await queries.events({ family: 'AAAAAAAAAAAAAAAAAAAAAA', types: [], limit: 100 })).rows.length),
    ];
    // access-at needs an account the index knows: the hot index holds accounts for good, so it is given its registration.
    index.apply([{ eventId: randomUUID(), stream: `account-${accounts[7]}`, revision: 0n, position: 0n, recordedAt: start - 1000, metadata: {}, event: { type: 'AccountRegistered', v: 1, accountId: accounts[7]!, name: 'bench', permissions: [], at: start / 1000 - 1 } }], undefined);
    const elevenMonthsAgo = Math.floor((end - 11 * 30.4 * 86_400_000) / 1000);
    queriesTimed.push(await timed('access-at an instant 11 months ago', async () => ((await queries.accessAt(accounts[7]!, elevenMonthsAgo, { limit: 100 })) ?? { families: [] }).families.length));
    index.close();
    return { months, rate, events, bytes, segments: days, writeSeconds, queries: queriesTimed };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * Part 5: what an appended issuance costs the log, by the shape of its ids. The log indexes every
 * event id (unique) and every stream name, and an issuance's stream is named by its family id. With
 * random ids each append lands on a random page of those two indexes, which a long log no longer
 * holds in memory and each commit writes out again. The store's ids (newEventId, newFamilyId) are
 * time-ordered, so appends land at the end. Measured on a log of BENCH_STORAGE_ID_EVENTS issuances
 * whose ids have the same shape, through the real store and its writer thread, in groups of 5 and
 * 30 appends per commit (light load and full load).
 */
async function measureIdShapes(): Promise<StorageResult['ids']> {
  const historyEvents = env('BENCH_STORAGE_ID_EVENTS', 1_000_000);
  const appends = env('BENCH_STORAGE_ID_APPENDS', 20_000);
  const shapes = [
    { shape: 'random', eventId: randomUUID, familyId: () => randomBytes(16).toString('base64url') },
    { shape: 'time-ordered', eventId: newEventId, familyId: () => newFamilyId() },
  ] as const;
  const costs: IdShapeCost[] = [];
  for (const { shape, eventId, familyId } of shapes) {
    const folder = mkdtempSync(join(tmpdir(), 'tessera-bench-ids-'));
    try {
      const file = join(folder, 'events.db');
      const start = Date.now() - historyEvents;
      progress(`storage: ${historyEvents} issuances with ${shape} ids`);
      for (let written = 0; written < historyEvents; written += 100_000) {
        const count = Math.min(100_000, historyEvents - written);
        writeRows(file, Array.from({ length: count }, (_, i) => issuance(start + written + i, written + i, familyId())), eventId);
      }
      const store = new SqliteEventStore({ file });
      try {
        for (const group of [5, 30]) {
          const cpuBefore = process.cpuUsage();
          const wallBefore = performance.now();
          for (let done = 0; done < appends; done += group) {
            await Promise.all(
              Array.from({ length: group }, () => {
                const { stream, event, metadata } = issuance(Date.now(), done, familyId());
                return store.append(stream, [{ event, eventId: eventId(), ...(metadata ? { metadata } : {}) }], { expectedRevision: 'no_stream' });
              }),
            );
          }
          const cpu = process.cpuUsage(cpuBefore);
          costs.push({ shape, group, cpuMicros: (cpu.user + cpu.system) / appends, wallMicros: ((performance.now() - wallBefore) * 1000) / appends });
          progress(`storage: ${shape} ids, groups of ${group}: ${costs[costs.length - 1]!.cpuMicros.toFixed(0)} µs CPU per append`);
        }
      } finally {
        await store.close();
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }
  return { historyEvents, appends, shapes: costs };
}

const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;

/** BENCH_STORAGE_PARTS: some of operations,curve,month,year,ids (default all), to run a part again alone. */
const parts = new Set((process.env.BENCH_STORAGE_PARTS ?? 'operations,curve,month,year,ids').split(','));

export async function measureStorage(): Promise<Partial<StorageResult>> {
  const result: { -readonly [K in keyof StorageResult]?: StorageResult[K] } = {};
  if (parts.has('operations')) {
    progress('storage: bytes per operation on the real server');
    result.perOperation = await measurePerOperation();
    progress(`storage: per issuance log ${result.perOperation.log.issuance.toFixed(0)} B, index ${result.perOperation.index.issuance.toFixed(0)} B`);
  }
  if (parts.has('curve')) result.curve = await measureCurve();
  if (parts.has('month')) {
    progress('storage: a simulated month at the default windows');
    result.month = await measureMonth();
  }
  if (parts.has('year')) {
    progress('storage: a 12-month archive through the archive writer');
    result.year = await measureYear();
  }
  if (parts.has('ids')) result.ids = await measureIdShapes();
  return result;
}

export function describeStorage(result: Partial<StorageResult>): string {
  const { perOperation: p, curve, month, year, ids } = result;
  const lines: string[] = [];
  if (p) {
    lines.push(
      `Storage, per operation (real server, ${p.issuances} issuances, ${p.refreshes} refreshes, ${p.revocations} revocations; each file after a WAL checkpoint):`,
      `  log:         ${p.log.issuance.toFixed(0)} B per issuance, ${p.log.refresh.toFixed(0)} B per refresh, ${p.log.revocation.toFixed(0)} B per revocation`,
      `  audit index: ${p.index.issuance.toFixed(0)} B per issuance, ${p.index.refresh.toFixed(0)} B per refresh, ${p.index.revocation.toFixed(0)} B per revocation`,
      `  issuance while measuring: ${p.issuedPerSecond.toFixed(0)} per second at 20 connections`,
    );
  }
  if (curve) {
    lines.push(
      `Disk under constant load, ${curve.rate} issuances/s, hot window ${curve.hotSeconds} s (second: log / index / archive):`,
      ...curve.samples.map((s) => `  ${String(s.second).padStart(4)} s: ${mb(s.logBytes)} / ${mb(s.indexBytes)} / ${mb(s.archiveBytes)}`),
      `  issuance p99 at ${curve.rate}/s: ${curve.withoutArchiving.latencyP99Ms} ms without archiving, ${curve.withArchiving.latencyP99Ms} ms with (p50 ${curve.withoutArchiving.latencyP50Ms} / ${curve.withArchiving.latencyP50Ms} ms)`,
    );
  }
  if (month) {
    lines.push(
      `Simulated ${month.days} days at ${month.rate} issuances/s (hot window 14 days, one run per simulated hour), day: log / index / archive / hot events:`,
      ...month.daily.map((d) => `  day ${String(d.day).padStart(2)}: ${mb(d.logBytes)} / ${mb(d.indexBytes)} / ${mb(d.archiveBytes)} / ${d.hotEvents}`),
      `  archiver: ${month.archiverEventsPerSecond.toFixed(0)} events/s; archive ${month.archiveBytesPerIssuance.toFixed(1)} B per issuance`,
    );
  }
  if (year) {
    lines.push(
      `${year.months}-month archive: ${year.events} events at ${year.rate}/s in ${year.segments} segments, ${mb(year.bytes)} (${(year.bytes / year.events).toFixed(1)} B per issuance), written in ${year.writeSeconds.toFixed(0)} s`,
      ...year.queries.map((q) => `  ${q.what}: ${q.ms.toFixed(0)} ms (${q.rows} rows)`),
    );
  }
  if (ids) {
    lines.push(
      `Appends to a log of ${ids.historyEvents} issuances whose ids have the same shape (the real store and its writer thread, ${ids.appends} appends per group size):`,
      ...ids.shapes.map((c) => `  ${c.shape.padEnd(12)} ids, groups of ${String(c.group).padStart(2)}: ${c.cpuMicros.toFixed(1)} µs CPU and ${c.wallMicros.toFixed(0)} µs wall per append`),
    );
  }
  return lines.join('\n');
}

export function storageRows(result: Partial<StorageResult>): Row[] {
  const { perOperation: p, curve, month, year, ids } = result;
  const row = (what: string, value: number | string, target: string, met: { met: boolean; distance: string } | '—'): Row => ({
    what,
    tessera: value,
    peer: '',
    ratio: '',
    target,
    met: met === '—' ? '—' : met.met,
    ...(met === '—' ? {} : { distance: met.distance }),
  });
  const rows: Row[] = [];
  if (p) rows.push(row('hot bytes per issuance, log + index (after checkpoints)', Math.round(p.log.issuance + p.index.issuance), '', '—'));
  if (month) {
    const last = month.daily[month.daily.length - 1];
    const from = month.daily.find((d) => d.day === month.days - 7) ?? month.daily[0];
    const total = (d: DaySample | undefined) => (d === undefined ? Number.NaN : d.logBytes + d.indexBytes);
    const growth = total(last) - total(from);
    rows.push(
      row(`hot log + index growth, simulated day ${from?.day ?? '?'} to ${last?.day ?? '?'}, bytes`, growth, 'no growth', {
        met: growth <= 0.02 * total(last),
        distance: `${mb(growth)}; ${((last?.hotEvents ?? 0) / (month.rate * 86_400)).toFixed(1)} days of events hot`,
      }),
      row('archive bytes per issuance (simulated month)', month.archiveBytesPerIssuance, '≤ 150 B', atMost(month.archiveBytesPerIssuance, 150, ' B')),
    );
    if (p) {
      const keepsUp = month.archiverEventsPerSecond / (3 * p.issuedPerSecond);
      rows.push(row(`archiver events/s against 3 × the sustained issuance rate (${p.issuedPerSecond.toFixed(0)}/s)`, month.archiverEventsPerSecond, '≥ 3×', { met: keepsUp >= 1, distance: `${keepsUp.toFixed(2)} of what is needed` }));
    }
  }
  if (year) {
    const archiveBytes = year.bytes / year.events;
    const firstPage = year.queries[0]!;
    const accessAt = year.queries[year.queries.length - 1]!;
    rows.push(
      row(`archive bytes per issuance (${year.months}-month archive)`, archiveBytes, '≤ 150 B', atMost(archiveBytes, 150, ' B')),
      row(`events by account over ${year.months} months, first page, ms`, firstPage.ms, '≤ 500 ms', atMost(firstPage.ms, 500, ' ms')),
      row('access-at 11 months ago, ms', accessAt.ms, '≤ 1000 ms', atMost(accessAt.ms, 1000, ' ms')),
    );
  }
  for (const group of new Set(ids?.shapes.map((c) => c.group))) {
    const random = ids?.shapes.find((c) => c.shape === 'random' && c.group === group);
    const ordered = ids?.shapes.find((c) => c.shape === 'time-ordered' && c.group === group);
    if (random && ordered) {
      rows.push({ what: `log CPU µs per appended issuance on a ${ids!.historyEvents}-event log, groups of ${group} (peer: random ids)`, tessera: ordered.cpuMicros, peer: random.cpuMicros, ratio: ordered.cpuMicros / random.cpuMicros, target: '', met: '—' });
    }
  }
  if (curve) {
    const p99Ratio = curve.withArchiving.latencyP99Ms / curve.withoutArchiving.latencyP99Ms;
    rows.push(row(`issuance p99 with archiving / without, at ${curve.rate}/s`, p99Ratio, '≤ 1.10', atMost(p99Ratio, 1.1)));
  }
  return rows;
}
