import { createHash, randomUUID } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DuckDBInstance, type DuckDBAppender, type DuckDBConnection } from '@duckdb/node-api';
import { idAsUuid, idFromUuid, streamFromKind, streamKindOf, type ArchivedAccess, type ArchivedEvent, type IdForm } from './archived-event.js';
import { CodedError, InvalidArgument } from '@tessera/contracts/errors';

/**
 * One segment's columns, in file order. Ids as 16-byte UUIDs with a text twin for other forms
 * (archived-event.ts); times and positions as integers (delta-encoded by Parquet); types,
 * addresses and actors as text Parquet stores in a dictionary.
 */
const idColumns: readonly { readonly name: string; readonly form: IdForm }[] = [
  { name: 'account_id', form: 'uuid' },
  { name: 'family_id', form: 'base64url16' },
  { name: 'request_id', form: 'uuid' },
  { name: 'credential_id', form: 'uuid' },
  { name: 'jti', form: 'base64url16' },
];

export const segmentColumns = `position BIGINT NOT NULL, time BIGINT NOT NULL, type VARCHAR NOT NULL, stream_kind VARCHAR NOT NULL, stream_text VARCHAR, revision BIGINT NOT NULL,
  account_id UUID, account_id_text VARCHAR, family_id UUID, family_id_text VARCHAR, generation INTEGER, reason VARCHAR,
  request_id UUID, request_id_text VARCHAR, source_address VARCHAR, actor VARCHAR, api_login_id VARCHAR, api_id VARCHAR,
  access_kind VARCHAR, credential_id UUID, credential_id_text VARCHAR, issued_at BIGINT, expires_at BIGINT, jti UUID, jti_text VARCHAR, revoked_at BIGINT`;

/** What a segment holds, as its manifest entry records it. */
export interface SegmentFacts {
  readonly sha256: string;
  readonly bytes: number;
  readonly rows: number;
  readonly minPosition: bigint;
  readonly maxPosition: bigint;
  /** Epoch milliseconds of its first and last event. */
  readonly minTime: number;
  readonly maxTime: number;
  /** The longest life (expires − issued, seconds) of a token it issued: how far back access-at must look. */
  readonly maxTokenLifeSeconds: number;
}

/** The suffix of a file Tessera writes in the archive folder before renaming it into place: a name no one else uses. */
export const temporarySuffix = '.tessera-tmp';

/** Rows per Parquet row group: its statistics let a read skip groups of positions and times. */
const rowGroupSize = 100_000;

/**
 * One DuckDB per process: segments are written and read through it (in memory; the files are
 * Parquet). One thread: archiving and archive reads run beside the thread that answers token
 * requests, and a second DuckDB thread would take that thread's core on a two-core host.
 */
let shared: Promise<DuckDBInstance> | undefined;
export function duckdb(): Promise<DuckDBInstance> {
  shared ??= DuckDBInstance.create(':memory:', { threads: '1' });
  return shared;
}

/** A segment written and read back did not hold what was written: nothing is archived from it. */
export class SegmentUnverified extends CodedError {
  readonly code = 'ERR_ARCHIVE_SEGMENT_UNVERIFIED';
}

/**
 * Writes `events` as a Parquet segment with zstd at `file`: to a temporary file, fsynced, renamed
 * into place and the folder fsynced; then read back through DuckDB and checked (rows, positions)
 * before anything else may count on it. The facts come from what was read back, not from memory.
 */
export async function writeSegment(file: string, events: readonly ArchivedEvent[]): Promise<SegmentFacts> {
  if (events.length === 0) throw new InvalidArgument('a segment holds at least one event');
  const connection = await (await duckdb()).connect();
  // A name no other write in this process's DuckDB is using: unique, not a time.
  const table = `segment_${randomUUID().replaceAll('-', '')}`;
  const temporary = `${file}${temporarySuffix}`;
  try {
    await connection.run(`CREATE TABLE ${table} (${segmentColumns})`);
    const appender = await connection.createAppender(table);
    for (const event of events) appendEvent(appender, event);
    appender.closeSync();
    rmSync(temporary, { force: true });
    await connection.run(
      `COPY (SELECT * FROM ${table} ORDER BY position) TO '${sqlText(temporary)}' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 9, ROW_GROUP_SIZE ${rowGroupSize})`,
    );
    // The archive names accounts, families and addresses, as the audit index does: the service's user only.
    chmodSync(temporary, 0o600);
    fsyncFile(temporary);
    renameSync(temporary, file);
    fsyncFile(dirname(file));
    const expected = positionsDigest(events.map((event) => event.position));
    const facts = await readSegmentFacts(connection, file);
    if (facts.rows !== events.length || facts.positionsDigest !== expected) {
      throw new SegmentUnverified(`segment ${file} read back ${facts.rows} rows of ${events.length}, or other positions: not archived`);
    }
    return facts.segment;
  } finally {
    rmSync(temporary, { force: true });
    await connection.run(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
    connection.closeSync();
  }
}

/** Reads a segment back whole: its facts, and a digest of its positions to compare with what was meant to be in it. */
async function readSegmentFacts(connection: DuckDBConnection, file: string): Promise<{ segment: SegmentFacts; rows: number; positionsDigest: string }> {
  const bytes = readFileSync(file);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const reader = await connection.runAndReadAll(
    `SELECT count(*), min(position), max(position), min(time), max(time), coalesce(max(expires_at - issued_at), 0), string_agg(position::VARCHAR, ',' ORDER BY position)
       FROM read_parquet('${sqlText(file)}')`,
  );
  const [count, minPosition, maxPosition, minTime, maxTime, maxLife, positions] = reader.getRows()[0]!;
  const rows = Number(count);
  return {
    rows,
    positionsDigest: createHash('sha256').update(String(positions)).digest('hex'),
    segment: {
      sha256,
      bytes: bytes.length,
      rows,
      minPosition: BigInt(String(minPosition)),
      maxPosition: BigInt(String(maxPosition)),
      minTime: Number(minTime),
      maxTime: Number(maxTime),
      maxTokenLifeSeconds: Number(maxLife),
    },
  };
}

/** The same digest over positions in order, as readSegmentFacts makes it. */
function positionsDigest(positions: readonly bigint[]): string {
  return createHash('sha256')
    .update([...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(','))
    .digest('hex');
}

/** Every event of a segment, in log order (to finish removing them from the hot store after a crash). */
export async function readSegment(file: string): Promise<ArchivedEvent[]> {
  const connection = await (await duckdb()).connect();
  try {
    const reader = await connection.runAndReadAll(`SELECT ${eventColumns} FROM read_parquet('${sqlText(file)}') ORDER BY position`);
    return reader.getRows().map(rowToEvent);
  } finally {
    connection.closeSync();
  }
}

function appendEvent(appender: DuckDBAppender, event: ArchivedEvent): void {
  const kind = streamKindOf(event.stream);
  appender.appendBigInt(event.position);
  appender.appendBigInt(BigInt(event.time));
  appender.appendVarchar(event.type);
  appender.appendVarchar(kind);
  optionalText(appender, streamFromKind(kind, event) === event.stream ? undefined : event.stream);
  appender.appendBigInt(event.revision);
  const access = event.access;
  const ids: Record<string, string | undefined> = {
    account_id: event.accountId,
    family_id: event.familyId,
    request_id: event.requestId,
    credential_id: access !== undefined && 'credentialId' in access ? access.credentialId : undefined,
    jti: access?.kind === 'legacy-token-issued' ? access.jti : undefined,
  };
  const id = (name: string) => {
    const column = idColumns.find((candidate) => candidate.name === name)!;
    const value = ids[name];
    const uuid = idAsUuid(value, column.form);
    optionalText(appender, uuid);
    optionalText(appender, uuid === undefined ? value : undefined);
  };
  id('account_id');
  id('family_id');
  optionalInteger(appender, event.generation);
  optionalText(appender, event.reason);
  id('request_id');
  optionalText(appender, event.sourceAddress);
  optionalText(appender, event.actor);
  optionalText(appender, event.apiLoginId);
  optionalText(appender, event.apiId);
  optionalText(appender, access?.kind);
  id('credential_id');
  optionalBigInt(appender, access !== undefined && 'issuedAt' in access ? access.issuedAt : undefined);
  optionalBigInt(appender, access !== undefined && 'expiresAt' in access ? access.expiresAt : undefined);
  id('jti');
  optionalBigInt(appender, access?.kind === 'family-revoked' ? access.revokedAt : undefined);
  appender.endRow();
}

/** The columns a read selects, in the order rowToEvent takes them. */
export const eventColumns =
  'position, time, type, stream_kind, stream_text, revision, account_id::VARCHAR, account_id_text, family_id::VARCHAR, family_id_text, generation, reason, request_id::VARCHAR, request_id_text, source_address, actor, api_login_id, api_id, access_kind, credential_id::VARCHAR, credential_id_text, issued_at, expires_at, jti::VARCHAR, jti_text, revoked_at';

/** A row read with `eventColumns`, as an ArchivedEvent. */
export function rowToEvent(row: readonly unknown[]): ArchivedEvent {
  const text = (index: number): string | undefined => (row[index] === null || row[index] === undefined ? undefined : String(row[index]));
  const int = (index: number): number | undefined => (row[index] === null || row[index] === undefined ? undefined : Number(row[index]));
  const id = (index: number, form: IdForm): string | undefined => {
    const uuid = text(index);
    return uuid !== undefined ? idFromUuid(uuid, form) : text(index + 1);
  };
  const familyId = id(8, 'base64url16');
  const accountId = id(6, 'uuid');
  const kind = text(3)!;
  const accessKind = text(18);
  const credentialId = id(19, 'uuid') ?? '';
  let access: ArchivedAccess | undefined;
  if (accessKind === 'generation-issued') {
    access = { kind: accessKind, familyId: familyId ?? '', generation: int(10) ?? 0, credentialId, issuedAt: int(21)!, expiresAt: int(22)! };
  } else if (accessKind === 'family-revoked') {
    access = { kind: accessKind, familyId: familyId ?? '', revokedAt: int(25)! };
  } else if (accessKind === 'legacy-token-issued') {
    access = { kind: accessKind, jti: id(23, 'base64url16') ?? '', credentialId, issuedAt: int(21)!, expiresAt: int(22)! };
  }
  return {
    position: BigInt(String(row[0])),
    time: Number(row[1]),
    type: text(2)!,
    stream: text(4) ?? streamFromKind(kind, { familyId, accountId }) ?? kind,
    revision: BigInt(String(row[5])),
    accountId,
    familyId,
    generation: int(10),
    reason: text(11),
    requestId: id(12, 'uuid'),
    sourceAddress: text(14),
    actor: text(15),
    apiLoginId: text(16),
    apiId: text(17),
    access,
  };
}

function optionalText(appender: DuckDBAppender, value: string | undefined): void {
  if (value === undefined) appender.appendNull();
  else appender.appendVarchar(value);
}

function optionalInteger(appender: DuckDBAppender, value: number | undefined): void {
  if (value === undefined) appender.appendNull();
  else appender.appendInteger(value);
}

function optionalBigInt(appender: DuckDBAppender, value: number | undefined): void {
  if (value === undefined) appender.appendNull();
  else appender.appendBigInt(BigInt(value));
}

/** A path or value inside a SQL string literal. */
export function sqlText(value: string): string {
  return value.replaceAll("'", "''");
}

/** fsync a file or a folder: what is renamed into place is on disk before anything depends on it. */
export function fsyncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** SHA-256 of a file, hex, as `sha256sum` prints it. */
export function sha256File(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

export const fileSize = (file: string): number => statSync(file).size;
