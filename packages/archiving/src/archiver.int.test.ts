import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { liveSegments, readManifest, readSegment, verifyArchive } from '@tessera/archive';
import type { RecordedEvent } from '@tessera/events';
import { SqliteEventStore, SqliteLogRetention } from '@tessera/event-store-sqlite';
import { issuedFamily, writeBulkLog, type BulkEntry } from '@tessera/event-store-sqlite/testing';
import { archiveTrustIn, readArchivePins } from './archive-trust.js';
import { Archiver, ArchiveManifestMissing, archiverSteps, type ArchiverDeps, type ArchiverStep } from './archiver.js';
import type { HotIndex, HotIndexRow } from './hot-index.js';

/**
 * The Archiver against a real SQLite log and the small index interface it declares (HotIndex), so
 * its own rules are checked apart from the audit index; the audit package runs it on the real one.
 */
const day = 86_400_000;
const t0 = Date.parse('2026-01-01T00:00:00Z');
const settings = { hotWindowSeconds: 14 * 86_400, clockSkewSeconds: 60, auditRetentionSeconds: 400 * 86_400 };
const accountId = randomUUID();

function legacyToken(at: number): BulkEntry {
  const seconds = Math.floor(at / 1000);
  return {
    stream: `legacytokens-${accountId}`,
    event: { type: 'LegacyTokenIssued', v: 1, accountId, credentialId: randomUUID(), apiId: 'tla_old', jti: randomBytes(16).toString('base64url'), issuedAt: seconds, expiresAt: seconds + 1800 },
    recordedAt: at,
    metadata: { accountId },
  };
}

/** An index that holds a row for each event it was handed, by the fields the archive keeps, and writes down what it is told to forget. */
class ListedIndex implements HotIndex {
  readonly rows = new Map<bigint, HotIndexRow>();
  readonly forgotten: { readonly positions: readonly bigint[]; readonly grantIds: readonly string[] }[] = [];
  reflected: bigint | undefined;

  constructor(events: readonly RecordedEvent[]) {
    for (const recorded of events) this.rows.set(recorded.position, rowOf(recorded));
    this.reflected = events[events.length - 1]?.position;
  }

  position(): bigint | undefined {
    return this.reflected;
  }

  rowsAt(positions: readonly bigint[]): ReadonlyMap<bigint, HotIndexRow> {
    return new Map(positions.flatMap((position) => (this.rows.has(position) ? [[position, this.rows.get(position)!] as const] : [])));
  }

  forget(positions: readonly bigint[], grantIds: readonly string[]): void {
    this.forgotten.push({ positions, grantIds });
    for (const position of positions) this.rows.delete(position);
  }
}

function rowOf({ event, recordedAt, metadata }: RecordedEvent): HotIndexRow {
  const fields: Readonly<Record<string, unknown>> = event;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return {
    type: event.type,
    time: recordedAt,
    accountId: text(fields.accountId),
    familyId: text(fields.familyId),
    generation: typeof fields.generation === 'number' ? fields.generation : undefined,
    reason: undefined,
    requestId: metadata.requestId,
    sourceAddress: undefined,
    actor: metadata.actor,
    apiLoginId: text(fields.apiLoginId),
    apiId: text(fields.apiId),
    access: event.type === 'LegacyTokenIssued' ? { kind: 'legacy-token-issued', jti: event.jti, credentialId: event.credentialId, issuedAt: event.issuedAt, expiresAt: event.expiresAt } : undefined,
  };
}

let folder: string;
let log: string;
let archiveDir: string;
let store: SqliteEventStore;
let writer: SqliteEventStore | undefined;
let retention: SqliteLogRetention;
let index: ListedIndex;
const closedFamilies = [issuedFamily(accountId, t0 + 1000), issuedFamily(accountId, t0 + 2000), issuedFamily(accountId, t0 + 3000)];
const deadToken = legacyToken(t0 + 4000);

beforeEach(async () => {
  folder = mkdtempSync(join(tmpdir(), 'tessera-archiver-'));
  log = join(folder, 'events.db');
  archiveDir = join(folder, 'archive');
  writeBulkLog(log, [
    { stream: `account-${accountId}`, event: { type: 'AccountRegistered', v: 1, accountId, name: 'shop', permissions: [], at: Math.floor(t0 / 1000) }, recordedAt: t0 },
    ...closedFamilies,
    deadToken,
    legacyToken(t0 + day),
    issuedFamily(accountId, t0 + 10 * day),
  ]);
  store = new SqliteEventStore({ file: log, readOnly: true });
  retention = new SqliteLogRetention(log);
  index = new ListedIndex(await store.readAll());
});

afterEach(async () => {
  await retention.close();
  await writer?.close();
  writer = undefined;
  await store.close();
  rmSync(folder, { recursive: true, force: true });
});

const archiver = (deps: Partial<ArchiverDeps> = {}) =>
  new Archiver({
    store,
    retention,
    index,
    archiveDir,
    keysDir: join(folder, 'keys'),
    settings,
    consumersPast: () => index.position(),
    trust: archiveTrustIn(store, async () => (writer ??= new SqliteEventStore({ file: log }))),
    ...deps,
  });
const hotStreams = async () => (await store.readAll()).map((recorded) => recorded.stream).filter((stream) => stream !== 'archivetrust');

describe('an archiving run', () => {
  it('writes what may leave to a signed segment of the index\'s rows, then removes it from the hot log and has the index forget exactly it', async () => {
    const before = await store.readAll();
    const leaving = before.filter((recorded) => [...closedFamilies, deadToken].some((entry) => entry.stream === recorded.stream && entry.recordedAt === recorded.recordedAt));
    const result = await archiver().run(t0 + 20 * day);

    expect(result.archived).toBe(4);
    expect(await hotStreams()).toEqual([`account-${accountId}`, `legacytokens-${accountId}`, expect.stringMatching(/^tokenfamily-/)]);
    const [segment] = liveSegments(readManifest(archiveDir));
    const archived = await readSegment(join(archiveDir, segment!.segment.file));
    expect(archived.map(({ position, stream, type, accountId: account }) => ({ position, stream, type, account }))).toEqual(
      leaving.map(({ position, stream, event }) => ({ position, stream, type: event.type, account: accountId })),
    );
    // The families by their ids, the v1 token by its own position: the grants the index made of them.
    const tokenPosition = leaving.find((recorded) => recorded.event.type === 'LegacyTokenIssued')!.position;
    const familyIds = closedFamilies.map(({ event }) => (event.type === 'TokenIssued' ? event.familyId : ''));
    expect(index.forgotten).toEqual([{ positions: leaving.map((recorded) => recorded.position), grantIds: expect.arrayContaining([...familyIds, `@${tokenPosition}`]) }]);
    expect(index.forgotten[0]!.grantIds).toHaveLength(4);
    expect(verifyArchive(archiveDir, { pins: await readArchivePins(store) }).ok).toBe(true);
  });

  it('archives nothing past the position the index reflects, and nothing while a consumer has not said where it is', async () => {
    const [account] = await store.readAll({ maxCount: 1 });
    index.reflected = account!.position;
    expect((await archiver().run(t0 + 20 * day)).archived).toBe(0);
    index.reflected = (await store.headPosition())!;
    expect((await archiver({ consumersPast: () => undefined }).run(t0 + 20 * day)).archived).toBe(0);
    expect(index.forgotten).toEqual([]);
    expect((await archiver().run(t0 + 20 * day)).archived).toBe(4);
  });

  it('stops before writing a segment when the index lacks a row for an event it is past: nothing leaves the hot log', async () => {
    const streamsBefore = await hotStreams();
    const [, firstFamily] = await store.readAll({ maxCount: 2 });
    index.rows.delete(firstFamily!.position);
    await expect(archiver().run(t0 + 20 * day)).rejects.toThrow(`the audit index has no row at log position ${firstFamily!.position}: nothing archived`);
    expect(readdirSync(join(archiveDir, 'segments'))).toEqual([]);
    expect(readManifest(archiveDir)).toEqual([]);
    expect(await hotStreams()).toEqual(streamsBefore);
    expect(index.forgotten).toEqual([]);
  });

  it('goes through its steps in the order that survives a crash at any of them', async () => {
    const steps: ArchiverStep[] = [];
    await archiver({ onStep: (step) => void steps.push(step) }).run(t0 + 20 * day);
    expect(steps).toEqual([...archiverSteps]);
  });

  it('stops on a folder holding segments but no manifest/, touching nothing', async () => {
    mkdirSync(join(archiveDir, 'segments'), { recursive: true });
    writeFileSync(join(archiveDir, 'segments', '00000001.parquet'), 'a segment whose entry is gone');
    await expect(archiver().run(t0 + 20 * day)).rejects.toBeInstanceOf(ArchiveManifestMissing);
    expect(existsSync(join(archiveDir, 'manifest'))).toBe(false);
    expect(existsSync(join(archiveDir, 'segments', '00000001.parquet'))).toBe(true);
    expect(index.forgotten).toEqual([]);
  });
});
