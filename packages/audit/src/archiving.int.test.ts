import { randomBytes, randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ArchiveReadInterrupted, ArchiveReader, liveSegments, readManifest, TrustedArchive, verifyArchive } from '@tessera/archive';
import { Archiver, archiveTrustIn, readArchivePins } from '@tessera/archiving';
import { SqliteEventStore, SqliteLogRetention } from '@tessera/event-store-sqlite';
import { writeBulkLog, type BulkEntry } from '@tessera/event-store-sqlite/testing';
import { AuditQueries } from './archive-queries.js';
import { AuditIndex } from './audit-index.js';
import { catchUpIndex } from './catch-up.js';
import { AuditQueryOverBudget } from './query-budget.js';

/**
 * The Archiver (@tessera/archiving) run on a real audit index: what leaves the hot log and the
 * index, and that the audit queries, which read the hot index and the archive together, answer the
 * same before and after.
 */
const day = 86_400_000;
const t0 = Date.parse('2026-01-01T00:00:00Z');
const s = (ms: number) => Math.floor(ms / 1000);
const settings = { hotWindowSeconds: 14 * 86_400, clockSkewSeconds: 60, auditRetentionSeconds: 400 * 86_400 };
const accountId = randomUUID();
const credentialId = randomUUID();
const familyId = () => randomBytes(16).toString('base64url');

function familyIssued(id: string, at: number, generation = 0): BulkEntry {
  const base = {
    v: 1 as const,
    familyId: id,
    accountId,
    credentialId,
    apiLoginId: 'tsl_shop',
    generation,
    refreshTokenHash: 'A'.repeat(43),
    jti: familyId(),
    scope: ['transaction:charge'],
    issuedAt: s(at),
    accessExpiresAt: s(at) + 3600,
    refreshExpiresAt: s(at) + 7 * 86_400,
  };
  return {
    stream: `tokenfamily-${id}`,
    event: generation === 0 ? { ...base, type: 'TokenIssued', generation: 0 } : { ...base, type: 'TokenRotated', rejectsUntil: s(at) + 3600 },
    recordedAt: at,
    metadata: { requestId: randomUUID(), sourceAddress: '127.0.0.1', accountId },
  };
}

function legacyToken(at: number): BulkEntry {
  return {
    stream: `legacytokens-${accountId}`,
    event: { type: 'LegacyTokenIssued', v: 1, accountId, credentialId, apiId: 'tla_old', jti: familyId(), issuedAt: s(at), expiresAt: s(at) + 1800 },
    recordedAt: at,
    metadata: { accountId },
  };
}

describe('archiving the hot log', () => {
  let folder: string;
  let log: string;
  let store: SqliteEventStore;
  let index: AuditIndex;
  let retention: SqliteLogRetention;
  /** Appends the archive's anchors: the reader store is read-only, as the audit thread's is. */
  let writer: SqliteEventStore | undefined;
  const closedFamily = familyId();
  const liveFamily = familyId();

  beforeEach(async () => {
    folder = mkdtempSync(join(tmpdir(), 'tessera-archive-'));
    log = join(folder, 'events.db');
    const entries: BulkEntry[] = [
      { stream: `account-${accountId}`, event: { type: 'AccountRegistered', v: 1, accountId, name: 'shop', permissions: [], at: s(t0) }, recordedAt: t0, metadata: { actor: 'cli' } },
      familyIssued(closedFamily, t0 + 1000),
      legacyToken(t0 + 2000),
      familyIssued(closedFamily, t0 + 3_600_000, 1),
      legacyToken(t0 + day),
      ...Array.from({ length: 200 }, (_, i) => familyIssued(familyId(), t0 + 2 * day + i * 1000)),
      familyIssued(liveFamily, t0 + 10 * day),
    ];
    writeBulkLog(log, entries);
    store = new SqliteEventStore({ file: log, readOnly: true });
    index = AuditIndex.open(join(folder, 'audit-index.db'));
    await catchUpIndex(index, store);
    retention = new SqliteLogRetention(log);
  });

  afterEach(async () => {
    index.close();
    await retention.close();
    await writer?.close();
    writer = undefined;
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const trust = () => archiveTrustIn(store, async () => (writer ??= new SqliteEventStore({ file: log })));
  const archiver = (archiveDir = join(folder, 'archive')) =>
    new Archiver({ store, retention, index, archiveDir, keysDir: join(folder, 'keys'), settings, consumersPast: () => index.position(), trust: trust() });
  const readerOf = (archiveDir: string) => new ArchiveReader(new TrustedArchive(archiveDir, () => readArchivePins(store)));
  const pinned = async (archiveDir: string) => verifyArchive(archiveDir, { pins: await readArchivePins(store) });

  async function everyPage(queries: AuditQueries, limit: number): Promise<{ rows: string[]; cursors: (string | undefined)[] }> {
    const rows: string[] = [];
    const cursors: (string | undefined)[] = [];
    let after: bigint | undefined;
    for (;;) {
      const page = await queries.events({ account: accountId, types: [], limit, ...(after === undefined ? {} : { after }) });
      rows.push(...page.rows.map((row) => JSON.stringify(row)));
      cursors.push(page.more?.toString());
      if (page.more === undefined) return { rows, cursors };
      after = page.more;
    }
  }

  it('moves closed families and dead v1 tokens past the hot window to a segment, and the audit answers stay the same, page by page', async () => {
    const archiveDir = join(folder, 'archive');
    const queries = new AuditQueries(index, readerOf(archiveDir));
    const before = await everyPage(queries, 7);
    const accessBefore = await queries.accessAt(accountId, s(t0) + 1800);
    const hotRowsBefore = new Database(log, { readonly: true }).prepare('SELECT count(*) AS n FROM events').get() as { n: number };

    const result = await archiver().run(t0 + 20 * day);

    // Every family of day 0-2 (closed 7 days + skew after its last refresh) and the first v1 token; the newest v1 token stays, as does the account.
    expect(result.archived).toBe(2 + 1 + 200);
    const db = new Database(log, { readonly: true });
    // The archive's anchors the run recorded (its key, then the head) are kept for good, as the account is.
    const hot = db.prepare('SELECT stream FROM events ORDER BY position').pluck().all() as string[];
    const anchors = db.prepare("SELECT type FROM events WHERE stream = 'archivetrust' ORDER BY position").pluck().all() as string[];
    db.close();
    expect(anchors).toEqual(['ArchiveKeyTrusted', 'ArchiveHeadRecorded']);
    expect(hot).toEqual([`account-${accountId}`, `legacytokens-${accountId}`, `tokenfamily-${liveFamily}`, 'archivetrust', 'archivetrust']);
    expect(hotRowsBefore.n + anchors.length - hot.length).toBe(result.archived);
    expect(index.events({ account: accountId, types: [], limit: 1000 }).rows).toHaveLength(3);

    const after = await everyPage(queries, 7);
    expect(after).toEqual(before);
    expect(await queries.accessAt(accountId, s(t0) + 1800)).toEqual(accessBefore);
    expect(accessBefore?.families.map((family) => family.familyId)).toEqual([closedFamily]);
    expect(accessBefore?.legacyTokens).toHaveLength(1);
    expect(await pinned(archiveDir)).toMatchObject({ ok: true, pinnedBy: 'the event log' });
  });

  it('archives nothing a consumer has not got past, and nothing younger than the window', async () => {
    const held = new Archiver({ store, retention, index, archiveDir: join(folder, 'archive'), keysDir: join(folder, 'keys'), settings, consumersPast: () => 1n, trust: trust() });
    expect((await held.run(t0 + 20 * day)).archived).toBe(0);
    expect((await archiver().run(t0 + 8 * day)).archived).toBe(0);
  });

  it('archives a revocations-<familyId> stream whole once closed, and mirroredrevocations-<region> event by event, keeping its newest', async () => {
    const remoteFamily = familyId();
    const liveRemoteFamily = familyId();
    const revoked = (id: string, at: number): BulkEntry => ({
      stream: `revocations-${id}`,
      event: { type: 'TokenRevoked', v: 1, familyId: id, accountId, generation: 0, revokedAt: s(at), accessExpiresAt: s(at) + 3600, rejectsUntil: s(at) + 7 * 86_400 },
      recordedAt: at,
      metadata: { accountId },
    });
    const mirrored = (at: number): BulkEntry => ({
      stream: 'mirroredrevocations-b',
      event: {
        type: 'RevocationMirrored',
        v: 1,
        region: 'b',
        sourceEventId: randomUUID(),
        sourceRecordedAt: at,
        revocation: { type: 'TokenRevoked', v: 1, familyId: familyId(), accountId, generation: 0, revokedAt: s(at), accessExpiresAt: s(at) + 3600, rejectsUntil: s(at) + 7 * 86_400 },
      },
      recordedAt: at,
      metadata: { accountId },
    });
    // After everything else in the log, as a real log records them.
    writeBulkLog(log, [revoked(remoteFamily, t0 + 11 * day), mirrored(t0 + 11 * day), mirrored(t0 + 12 * day), revoked(liveRemoteFamily, t0 + 25 * day)]);
    await catchUpIndex(index, store);

    await archiver().run(t0 + 30 * day);

    const db = new Database(log, { readonly: true });
    const left = db.prepare("SELECT stream FROM events WHERE stream LIKE '%revocations-%' ORDER BY position").pluck().all() as string[];
    db.close();
    // The closed one went whole; the one revoked on day 25 is inside the window and stays; of the mirrored, the newest stays.
    expect(left).toEqual(['mirroredrevocations-b', `revocations-${liveRemoteFamily}`]);
    expect((await pinned(join(folder, 'archive'))).ok).toBe(true);
  });

  it('gives the space back: the log file shrinks once the removed events are vacuumed', async () => {
    writeBulkLog(log, Array.from({ length: 20_000 }, (_, i) => familyIssued(familyId(), t0 + 11 * day + i)));
    await catchUpIndex(index, store);
    const checkpoint = new Database(log);
    checkpoint.pragma('wal_checkpoint(TRUNCATE)');
    checkpoint.close();
    const bytesBefore = retention.bytesOnDisk();
    expect((await archiver().run(t0 + 30 * day)).archived).toBeGreaterThan(20_000);
    const after = new Database(log);
    after.pragma('wal_checkpoint(TRUNCATE)');
    expect(after.pragma('auto_vacuum', { simple: true })).toBe(2);
    after.close();
    expect(retention.bytesOnDisk()).toBeLessThan(bytesBefore / 2);
  });

  it('tessera archive verify catches one flipped byte in a segment and one removed segment, naming the first break', async () => {
    const archiveDir = join(folder, 'archive');
    await archiver().run(t0 + 20 * day);
    writeBulkLog(log, [familyIssued(familyId(), t0 + 21 * day)]);
    await catchUpIndex(index, store);
    await archiver().run(t0 + 40 * day);
    const segments = liveSegments(readManifest(archiveDir));
    expect(segments).toHaveLength(2);
    expect((await pinned(archiveDir)).ok).toBe(true);

    const first = join(archiveDir, segments[0]!.segment.file);
    const original = readFileSync(first);
    const flipped = Buffer.from(original);
    const middle = Math.floor(flipped.length / 2);
    flipped[middle] = flipped[middle]! ^ 0x01;
    writeFileSync(first, flipped);
    const broken = verifyArchive(archiveDir);
    expect(broken.ok).toBe(false);
    expect(broken.firstBreak).toMatchObject({ sequence: 1, file: segments[0]!.segment.file });
    expect(broken.firstBreak?.problem).toMatch(/hashes to .* not the .* its entry recorded/);
    writeFileSync(first, original);
    expect(verifyArchive(archiveDir).ok).toBe(true);

    const second = join(archiveDir, segments[1]!.segment.file);
    copyFileSync(second, `${second}.kept`);
    rmSync(second);
    expect(verifyArchive(archiveDir).firstBreak).toMatchObject({ sequence: 2, file: segments[1]!.segment.file, problem: expect.stringMatching(/missing, and no entry records its deletion/) });
  });

  it('deletes segments past TESSERA_AUDIT_RETENTION and records the deletion in the signed manifest', async () => {
    const archiveDir = join(folder, 'archive');
    await archiver().run(t0 + 20 * day);
    const result = await archiver().run(t0 + 403 * day);
    expect(result.deletedSegments).toBe(1);
    const entries = readManifest(archiveDir).map(({ entry }) => entry);
    // The deletion is recorded before the run archives what has closed since (the family of day 10).
    expect(entries.map((entry) => entry.kind)).toEqual(['segment', 'deletion', 'segment']);
    expect(entries[1]).toMatchObject({ kind: 'deletion', deleted: [{ sequence: 1, file: 'segments/00000001.parquet' }] });
    expect(liveSegments(readManifest(archiveDir)).map((entry) => entry.sequence)).toEqual([3]);
    expect(await pinned(archiveDir)).toMatchObject({ ok: true, entries: 3, segments: 1 });
  });

  it('the audit query budget covers the archive: a read past it is stopped and answered as over budget', async () => {
    const archiveDir = join(folder, 'archive');
    await archiver().run(t0 + 20 * day);
    const queries = new AuditQueries(index, readerOf(archiveDir));
    await expect(queries.events({ account: accountId, types: [], limit: 10 }, 0)).rejects.toBeInstanceOf(AuditQueryOverBudget);
    await expect(queries.accessAt(accountId, s(t0) + 1800, { limit: 10 }, 0)).rejects.toBeInstanceOf(AuditQueryOverBudget);
    const reader = readerOf(archiveDir);
    await expect(reader.events({ types: [], rows: 10 }, performance.now() - 1)).rejects.toBeInstanceOf(ArchiveReadInterrupted);
    expect((await queries.events({ account: accountId, types: [], limit: 10 }, 2000)).rows).toHaveLength(10);
  });
});
