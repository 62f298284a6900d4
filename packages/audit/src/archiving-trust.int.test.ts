import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ArchiveReader,
  ArchiveUntrusted,
  fingerprintOf,
  liveSegments,
  readManifest,
  readSegment,
  sha256File,
  TrustedArchive,
  verifyArchive,
  writeSegment,
  type ArchivedEvent,
  type ManifestEntry,
} from '@tessera/archive';
import { Archiver, archiveTrustIn, readArchivePins } from '@tessera/archiving';
import { SqliteEventStore, SqliteLogRetention } from '@tessera/event-store-sqlite';
import { issuedFamily, writeBulkLog, type BulkEntry } from '@tessera/event-store-sqlite/testing';
import { AuditQueries } from './archive-queries.js';
import { AuditIndex } from './audit-index.js';
import { catchUpIndex } from './catch-up.js';

/**
 * Write access to the archive folder, used as an attacker (or a careless operator) would: each
 * case is something the archive once let through, and now refuses, detects or leaves alone. The
 * anchors live in the log (ArchiveKeyTrusted, ArchiveHeadRecorded), which the archive folder
 * cannot reach. The Archiver (@tessera/archiving) runs on a real audit index, and the audit
 * queries read both, as the audit thread composes them.
 */
const day = 86_400_000;
const t0 = Date.parse('2026-01-01T00:00:00Z');
const s = (ms: number) => Math.floor(ms / 1000);
const settings = { hotWindowSeconds: 14 * 86_400, clockSkewSeconds: 60, auditRetentionSeconds: 400 * 86_400 };
const accountId = randomUUID();
const adminTokenId = randomUUID();
const revokedFamily = issuedFamily(accountId, t0 + 5000);
const revokedFamilyId = (revokedFamily.event as { familyId: string }).familyId;

let folder: string;
let log: string;
let archiveDir: string;
let store: SqliteEventStore;
let writer: SqliteEventStore | undefined;
let index: AuditIndex;
let retention: SqliteLogRetention;

beforeEach(async () => {
  folder = mkdtempSync(join(tmpdir(), 'tessera-archive-trust-'));
  log = join(folder, 'events.db');
  archiveDir = join(folder, 'archive');
  const entries: BulkEntry[] = [
    { stream: `account-${accountId}`, event: { type: 'AccountRegistered', v: 1, accountId, name: 'shop', permissions: [], at: s(t0) }, recordedAt: t0, metadata: { actor: 'cli' } },
    { stream: `admintoken-${adminTokenId}`, event: { type: 'AdminTokenIssued', v: 1, adminTokenId, name: 'ops', scopes: ['audit:read'], tokenHash: 'T'.repeat(43), at: s(t0) }, recordedAt: t0, metadata: { actor: 'cli' } },
    { stream: `admintoken-${adminTokenId}`, event: { type: 'AdminTokenRevoked', v: 1, adminTokenId, at: s(t0) + 60 }, recordedAt: t0 + 60_000, metadata: { actor: 'cli' } },
    revokedFamily,
    {
      stream: revokedFamily.stream,
      event: { type: 'TokenRevoked', v: 1, familyId: revokedFamilyId, accountId, generation: 0, revokedAt: s(t0) + 10, accessExpiresAt: s(t0) + 3600 },
      recordedAt: t0 + 10_000,
      metadata: { accountId },
    },
    ...Array.from({ length: 50 }, (_, i) => issuedFamily(accountId, t0 + day + i * 1000)),
    issuedFamily(accountId, t0 + 10 * day),
  ];
  writeBulkLog(log, entries);
  store = new SqliteEventStore({ file: log, readOnly: true });
  index = AuditIndex.open(join(folder, 'audit-index.db'));
  await catchUpIndex(index, store);
  retention = new SqliteLogRetention(log);
  // The first run: the revoked family and the day-1 families go to segment 1.
  expect((await archiver().run(t0 + 20 * day)).archived).toBe(52);
});

afterEach(async () => {
  index.close();
  await retention.close();
  await writer?.close();
  writer = undefined;
  await store.close();
  rmSync(folder, { recursive: true, force: true });
});

/** The time of the run at hand: the anchors are recorded at it, as a server's store records them at its clock's. */
let runAt = t0;
function archiver(): Pick<Archiver, 'run'> {
  const trust = archiveTrustIn(store, async () => (writer ??= new SqliteEventStore({ file: log, clock: { now: () => runAt } })));
  const archiver = new Archiver({ store, retention, index, archiveDir, keysDir: join(folder, 'keys'), settings, consumersPast: () => index.position(), trust });
  return {
    run: (now: number) => {
      runAt = now;
      return archiver.run(now);
    },
  };
}

const pinned = async () => verifyArchive(archiveDir, { pins: await readArchivePins(store) });
const queries = () => new AuditQueries(index, new ArchiveReader(new TrustedArchive(archiveDir, () => readArchivePins(store))));
const hotStreams = () => {
  const db = new Database(log, { readonly: true });
  const streams = db.prepare('SELECT stream FROM events ORDER BY position').pluck().all() as string[];
  db.close();
  return streams;
};
const entryFile = (sequence: number) => join(archiveDir, 'manifest', `${String(sequence).padStart(8, '0')}.json`);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** An Ed25519 key of the attacker's, its public half dropped into the archive's keys/ as Tessera names its own. */
function attackerKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const fingerprint = fingerprintOf(publicKey);
  writeFileSync(join(archiveDir, 'keys', `${fingerprint}.pem`), publicKey.export({ type: 'spki', format: 'pem' }));
  return { fingerprint, sign: (bytes: Buffer) => sign(null, bytes, privateKey) };
}

/** Writes an entry at `sequence`, chained to the one before, signed with `key` (or unsigned). */
function plantEntry(sequence: number, body: Partial<ManifestEntry>, key?: ReturnType<typeof attackerKey>): void {
  const previous = sequence === 1 ? null : sha256(readFileSync(entryFile(sequence - 1)));
  const entry = { format: 'tessera-archive-manifest/1', sequence, previous_entry_sha256: previous, created_at: new Date(t0 + 20 * day).toISOString(), key_fingerprint: key?.fingerprint ?? '0'.repeat(64), ...body };
  const bytes = Buffer.from(`${JSON.stringify(entry, null, 1)}\n`);
  writeFileSync(entryFile(sequence), bytes);
  if (key !== undefined) writeFileSync(entryFile(sequence).replace(/\.json$/, '.sig'), key.sign(bytes));
}

/** A segment holding one archived event at `position` of `stream`: what a planted entry would name for removal. */
async function plantSegment(sequence: number, position: bigint, stream: string): Promise<{ file: string; sha256: string; bytes: number; rows: number; min_position: string; max_position: string; min_time: string; max_time: string; max_token_life_seconds: number }> {
  const file = `segments/${String(sequence).padStart(8, '0')}.parquet`;
  const event: ArchivedEvent = {
    position,
    stream,
    revision: 1n,
    type: 'AdminTokenRevoked',
    time: t0,
    accountId: undefined,
    familyId: undefined,
    generation: undefined,
    reason: undefined,
    requestId: undefined,
    sourceAddress: undefined,
    actor: 'cli',
    apiLoginId: undefined,
    apiId: undefined,
    access: undefined,
  };
  const facts = await writeSegment(join(archiveDir, file), [event]);
  const time = new Date(t0).toISOString();
  return { file, sha256: facts.sha256, bytes: facts.bytes, rows: 1, min_position: String(position), max_position: String(position), min_time: time, max_time: time, max_token_life_seconds: 0 };
}

describe('the archive acts only on what it can pin', () => {
  it('records its key before signing with it and the head after the run, in a stream that is never archived', async () => {
    const db = new Database(log, { readonly: true });
    const anchors = db.prepare("SELECT type, payload FROM events WHERE stream = 'archivetrust' ORDER BY position").all() as { type: string; payload: string }[];
    db.close();
    expect(anchors.map((anchor) => anchor.type)).toEqual(['ArchiveKeyTrusted', 'ArchiveHeadRecorded']);
    const [key, head] = anchors.map((anchor) => JSON.parse(anchor.payload) as Record<string, unknown>);
    expect(key).toMatchObject({ source: 'made', fingerprint: readManifest(archiveDir)[0]!.entry.key_fingerprint });
    expect(head).toMatchObject({ sequence: 1, sha256: sha256(readFileSync(entryFile(1))) });
    expect(await pinned()).toMatchObject({ ok: true, pinnedBy: 'the event log', entries: 1 });
    // A later run keeps them: they are the archive's own trust, not archivable history.
    await archiver().run(t0 + 40 * day);
    expect(hotStreams().filter((stream) => stream === 'archivetrust').length).toBeGreaterThanOrEqual(2);
  });

  it('a planted entry naming an AdminTokenRevoked event (unsigned, or signed by a key dropped into keys/) removes nothing', async () => {
    const adminStream = `admintoken-${adminTokenId}`;
    const db = new Database(log, { readonly: true });
    const revokedAt = BigInt(db.prepare("SELECT position FROM events WHERE type = 'AdminTokenRevoked'").pluck().get() as number);
    db.close();
    const segment = await plantSegment(2, revokedAt, adminStream);
    plantEntry(2, { kind: 'segment', segment } as Partial<ManifestEntry>);
    await expect(archiver().run(t0 + 21 * day)).rejects.toBeInstanceOf(ArchiveUntrusted);
    expect(hotStreams()).toContain(adminStream);

    const key = attackerKey();
    plantEntry(2, { kind: 'segment', segment, key_fingerprint: key.fingerprint } as Partial<ManifestEntry>, key);
    // Against itself the archive checks out: the key is in keys/ under its own fingerprint.
    expect(verifyArchive(archiveDir).ok).toBe(true);
    const refused = await archiver().run(t0 + 21 * day).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ArchiveUntrusted);
    expect((refused as ArchiveUntrusted).message).toMatch(/entry 2.*signed by archive key [0-9a-f]{64}, which the event log does not pin/);
    expect(hotStreams().filter((stream) => stream === adminStream)).toHaveLength(2);
  });

  it('an archive re-signed with a key of the attacker\'s, a TokenRevoked row taken out, fails against the pins, and queries answer 503 rather than without the row', async () => {
    const before = await queries().events({ family: revokedFamilyId, types: [], limit: 10 });
    expect(before.rows.map((row) => row.type)).toEqual(['TokenIssued', 'TokenRevoked']);
    const [stored] = readManifest(archiveDir);
    const original = stored!.entry as Extract<ManifestEntry, { kind: 'segment' }>;
    const events = (await readSegment(join(archiveDir, original.segment.file))).filter((event) => event.type !== 'TokenRevoked');
    rmSync(join(archiveDir, original.segment.file));
    const facts = await writeSegment(join(archiveDir, original.segment.file), events);
    const key = attackerKey();
    plantEntry(1, { kind: 'segment', key_fingerprint: key.fingerprint, segment: { ...original.segment, sha256: facts.sha256, bytes: facts.bytes, rows: facts.rows } }, key);
    expect(verifyArchive(archiveDir).ok).toBe(true);

    const found = await pinned();
    expect(found.ok).toBe(false);
    expect(found.firstBreak?.problem).toMatch(/which the event log does not pin/);
    await expect(queries().events({ family: revokedFamilyId, types: [], limit: 10 })).rejects.toMatchObject({ code: 'ERR_ARCHIVE_UNTRUSTED' });
  });

  it('an edited max_time is caught before the server signs a deletion computed from it; restoring the entry leaves the chain as it was', async () => {
    const original = readFileSync(entryFile(1));
    const edited = JSON.parse(original.toString('utf8')) as { segment: { max_time: string } };
    edited.segment.max_time = new Date(t0 - 500 * day).toISOString();
    writeFileSync(entryFile(1), `${JSON.stringify(edited, null, 1)}\n`);
    await expect(archiver().run(t0 + 21 * day)).rejects.toBeInstanceOf(ArchiveUntrusted);
    writeFileSync(entryFile(1), original);
    expect(readManifest(archiveDir).map(({ entry }) => entry.kind)).toEqual(['segment']);
    expect(liveSegments(readManifest(archiveDir))).toHaveLength(1);
    expect((await pinned()).ok).toBe(true);
  });

  it('a cut tail, or a manifest/ rolled back to an older copy, fails against the recorded head, though the chain left is whole', async () => {
    await archiver().run(t0 + 40 * day);
    expect(readManifest(archiveDir)).toHaveLength(2);
    const last = readManifest(archiveDir)[1]!.entry as Extract<ManifestEntry, { kind: 'segment' }>;
    renameSync(entryFile(2), join(folder, 'entry-2.json'));
    renameSync(entryFile(2).replace(/\.json$/, '.sig'), join(folder, 'entry-2.sig'));
    rmSync(join(archiveDir, last.segment.file));
    expect(verifyArchive(archiveDir)).toMatchObject({ ok: true, entries: 1 });
    const cut = await pinned();
    expect(cut.ok).toBe(false);
    expect(cut.firstBreak?.problem).toMatch(/the manifest ends at entry 1, before the head the event log pins \(entry 2, sha256 [0-9a-f]{64}\): entries were cut off/);
    await expect(queries().events({ types: [], limit: 10 })).rejects.toMatchObject({ code: 'ERR_ARCHIVE_UNTRUSTED' });
    await expect(archiver().run(t0 + 41 * day)).rejects.toBeInstanceOf(ArchiveUntrusted);
  });

  it('a missing manifest/ stops archiving with a clear error and deletes no segment', async () => {
    const [entry] = liveSegments(readManifest(archiveDir));
    const segment = join(archiveDir, entry!.segment.file);
    renameSync(join(archiveDir, 'manifest'), join(folder, 'manifest-elsewhere'));
    await expect(archiver().run(t0 + 21 * day)).rejects.toThrow(/holds segments but no manifest\/ folder: archiving stops until it is restored/);
    expect(existsSync(segment)).toBe(true);
    expect((await pinned()).firstBreak?.problem).toMatch(/the manifest\/ folder is missing, though the event log pins its head at entry 1/);
    await expect(queries().events({ types: [], limit: 10 })).rejects.toMatchObject({ code: 'ERR_ARCHIVE_UNTRUSTED' });
  });

  it('a segment changed after the process checked it is hashed again before the next query reads it: 503, never a wrong 200', async () => {
    const reader = queries();
    expect((await reader.events({ family: revokedFamilyId, types: [], limit: 10 })).rows).toHaveLength(2);
    const [entry] = liveSegments(readManifest(archiveDir));
    const file = join(archiveDir, entry!.segment.file);
    const events = (await readSegment(file)).filter((event) => event.type !== 'TokenRevoked');
    rmSync(file);
    await writeSegment(file, events);
    expect(sha256File(file)).not.toBe(entry!.segment.sha256);
    await expect(reader.events({ family: revokedFamilyId, types: [], limit: 10 })).rejects.toMatchObject({ code: 'ERR_ARCHIVE_UNTRUSTED' });
    await expect(reader.accessAt(accountId, s(t0) + 5)).rejects.toMatchObject({ code: 'ERR_ARCHIVE_UNTRUSTED' });
  });

  it('files Tessera did not write are left where they are: an operator\'s renamed segment and a stray file survive the next runs', async () => {
    const [entry] = liveSegments(readManifest(archiveDir));
    const segment = join(archiveDir, entry!.segment.file);
    renameSync(segment, `${segment}.away`);
    writeFileSync(join(archiveDir, 'segments', 'notes.txt'), 'kept by the operator\n');
    // The segment is missing, so the run stops; nothing of the operator's is touched.
    await expect(archiver().run(t0 + 21 * day)).rejects.toBeInstanceOf(ArchiveUntrusted);
    expect(existsSync(`${segment}.away`)).toBe(true);
    renameSync(`${segment}.away`, segment);
    const result = await archiver().run(t0 + 40 * day);
    expect(result.foreign).toEqual(['segments/notes.txt']);
    expect(existsSync(join(archiveDir, 'segments', 'notes.txt'))).toBe(true);
    // Tessera's own leftovers still go: a temporary file, and a segment a crash left unrecorded.
    writeFileSync(join(archiveDir, 'segments', '00000009.parquet'), 'unrecorded');
    writeFileSync(join(archiveDir, 'segments', '00000009.parquet.tessera-tmp'), 'half written');
    await archiver().run(t0 + 41 * day);
    expect(existsSync(join(archiveDir, 'segments', '00000009.parquet'))).toBe(false);
    expect(existsSync(join(archiveDir, 'segments', '00000009.parquet.tessera-tmp'))).toBe(false);
    expect(existsSync(join(archiveDir, 'segments', 'notes.txt'))).toBe(true);
  });

  it('an older log restored beside a newer archive: the archive verifies, and the next run takes back out of the hot log what the archive already holds', async () => {
    // The log's backup, taken before a run that archived more; the archive's copy, taken after it.
    const backup = join(folder, 'events-backup.db');
    const db = new Database(log, { readonly: true });
    await db.backup(backup);
    db.close();
    const archivedLater = (await archiver().run(t0 + 40 * day)).archived;
    expect(archivedLater).toBeGreaterThan(0);
    index.close();
    await retention.close();
    await writer?.close();
    writer = undefined;
    await store.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${log}${suffix}`, { force: true });
    rmSync(join(folder, 'audit-index.db'), { force: true });
    renameSync(backup, log);
    store = new SqliteEventStore({ file: log, readOnly: true });
    index = AuditIndex.open(join(folder, 'audit-index.db'));
    await catchUpIndex(index, store);
    retention = new SqliteLogRetention(log);
    const hotBefore = hotStreams().length;

    // The log pins entry 1; the archive has entry 2 past it, signed by the pinned key.
    expect((await readArchivePins(store)).head?.sequence).toBe(1);
    expect((await pinned()).ok).toBe(true);
    const result = await archiver().run(t0 + 41 * day);
    expect(result.finished).toBe(archivedLater);
    expect(hotBefore - hotStreams().filter((stream) => stream !== 'archivetrust').length).toBeGreaterThanOrEqual(archivedLater);
    expect((await readArchivePins(store)).head?.sequence).toBe(2);
    const rows = (await queries().events({ types: [], limit: 1000 })).rows.map((row) => row.position);
    expect(new Set(rows).size).toBe(rows.length);
  });

  it('an archive written before anchors existed is adopted once, as it is, and pinned from then on', async () => {
    // As a release before anchors left it: the archive, and a log without the archivetrust stream.
    const db = new Database(log);
    db.prepare("DELETE FROM events WHERE stream = 'archivetrust'").run();
    db.close();
    expect((await readArchivePins(store)).keys.size).toBe(0);
    await archiver().run(t0 + 21 * day);
    const pins = await readArchivePins(store);
    expect(pins.keys.size).toBe(1);
    expect(pins.head).toEqual({ sequence: 1, sha256: sha256(readFileSync(entryFile(1))) });
    expect((await pinned()).ok).toBe(true);
  });
});
