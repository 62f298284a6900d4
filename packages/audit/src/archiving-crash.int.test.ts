import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ArchiveReader, liveSegments, readManifest, readSegment, TrustedArchive, verifyArchive } from '@tessera/archive';
import { archiverSteps, readArchivePins } from '@tessera/archiving';
import { SqliteEventStore } from '@tessera/event-store-sqlite';
import { issuedFamily, writeBulkLog, type BulkEntry } from '@tessera/event-store-sqlite/testing';
import { AuditQueries } from './archive-queries.js';
import { AuditIndex } from './audit-index.js';
import { catchUpIndex } from './catch-up.js';

/**
 * The Archiver (@tessera/archiving) killed at each of its steps, in a process of its own
 * (testing/archive-run-child.ts) over a real audit index: the audit queries count every event once
 * right after the kill, and the next runs finish the job.
 */
const run = promisify(execFile);
const day = 86_400_000;
const t0 = Date.parse('2026-01-01T00:00:00Z');
const child = join(import.meta.dirname, 'testing', 'archive-run-child.ts');
const accountId = randomUUID();

function families(count: number, from: number): BulkEntry[] {
  return Array.from({ length: count }, (_, i) => issuedFamily(accountId, from + i * 1000));
}

describe('archiving killed with SIGKILL at every step', () => {
  const folders: string[] = [];
  afterEach(() => {
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });

  for (const step of archiverSteps) {
    it(`after "${step}": the next run finishes the job; no event is lost, none is counted twice`, async () => {
      const folder = mkdtempSync(join(tmpdir(), 'tessera-archive-crash-'));
      folders.push(folder);
      const log = join(folder, 'events.db');
      writeBulkLog(log, [
        { stream: `account-${accountId}`, event: { type: 'AccountRegistered', v: 1, accountId, name: 'shop', permissions: [], at: Math.floor(t0 / 1000) }, recordedAt: t0 },
        ...families(1200, t0 + 1000),
      ]);
      const store = new SqliteEventStore({ file: log, readOnly: true });
      const index = AuditIndex.open(join(folder, 'audit-index.db'));
      await catchUpIndex(index, store);
      index.close();
      const now = String(t0 + 30 * day);

      const killed = await run(process.execPath, ['--import', 'tsx', child, log, folder, now, step]).then(
        () => undefined,
        (error: { signal?: string }) => error.signal,
      );
      expect(killed).toBe('SIGKILL');
      // Right after the kill, before anything repairs it: the queries count each event once.
      expect(await allPositions(folder, store)).toHaveLength(1201);
      // Two more runs: the first finishes what the killed one left (or archives its share again), the second the rest.
      for (let i = 0; i < 3; i += 1) await run(process.execPath, ['--import', 'tsx', child, log, folder, now, 'none']);

      const archiveDir = join(folder, 'archive');
      expect(verifyArchive(archiveDir, { pins: await readArchivePins(store) })).toMatchObject({ ok: true, pinnedBy: 'the event log' });
      const archived = (await Promise.all(liveSegments(readManifest(archiveDir)).map((entry) => readSegment(join(archiveDir, entry.segment.file))))).flat();
      const db = new Database(log, { readonly: true });
      // The archive's anchors (its key, each head) are kept for good: not part of what was archived.
      const hot = (db.prepare("SELECT position FROM events WHERE stream <> 'archivetrust'").pluck().all() as number[]).map(BigInt);
      db.close();
      const archivedPositions = archived.map((event) => event.position);
      // Every event is in exactly one place: no position twice in the archive, none both hot and archived.
      expect(new Set(archivedPositions).size).toBe(archivedPositions.length);
      expect(archivedPositions.filter((position) => hot.includes(position))).toEqual([]);
      expect(hot.length + archivedPositions.length).toBe(1201);
      expect(hot).toEqual([1n]);

      const seen = await allPositions(folder, store);
      await store.close();
      expect(seen).toHaveLength(1201);
      expect(new Set(seen).size).toBe(1201);
    }, 120_000);
  }
});

/** Every position the audit queries answer across the hot index and the archive, page by page. */
async function allPositions(folder: string, store: SqliteEventStore): Promise<string[]> {
  const archiveDir = join(folder, 'archive');
  const index = AuditIndex.open(join(folder, 'audit-index.db'));
  const queries = new AuditQueries(index, new ArchiveReader(new TrustedArchive(archiveDir, () => readArchivePins(store))));
  const seen: string[] = [];
  let after: bigint | undefined;
  try {
    for (;;) {
      const page = await queries.events({ types: [], limit: 1000, ...(after === undefined ? {} : { after }) });
      seen.push(...page.rows.map((row) => row.position));
      if (page.more === undefined) return seen;
      after = page.more;
    }
  } finally {
    index.close();
  }
}
