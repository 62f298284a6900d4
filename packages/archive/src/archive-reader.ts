import { join } from 'node:path';
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { idAsUuid, type ArchivedAccess, type ArchivedEvent, type IdForm } from './archived-event.js';
import type { SegmentEntry } from './manifest.js';
import { duckdb, eventColumns, rowToEvent, sqlText } from './segment-file.js';
import type { TrustedArchive } from './trusted-archive.js';
import { CodedError } from '@tessera/contracts/errors';

/** The events query's filters, as the audit index takes them. */
export interface ArchiveEventQuery {
  readonly account?: string | undefined;
  readonly family?: string | undefined;
  readonly apiLoginId?: string | undefined;
  readonly apiId?: string | undefined;
  readonly types: readonly string[];
  /** Epoch milliseconds, inclusive / exclusive. */
  readonly since?: number | undefined;
  readonly until?: number | undefined;
  /** Rows strictly after this position. */
  readonly after?: bigint | undefined;
  /** Rows wanted: the reader returns up to this many, the first in log order. */
  readonly rows: number;
}

/** A read stopped at its deadline (the audit query's budget). */
export class ArchiveReadInterrupted extends CodedError {
  readonly code = 'ERR_ARCHIVE_READ_INTERRUPTED';
  constructor() {
    super('the archive read ran past its deadline');
    this.name = 'ArchiveReadInterrupted';
  }
}

/** Segments read per query: few enough that a first page stops early, enough that a long scan is few queries. */
const segmentsPerRead = 16;
/**
 * How far an event's recorded time may be from the issuer's `iat` and `exp` it carries: the most
 * TESSERA_CLOCK_SKEW allows, so that access-at never misses an event by a skewed clock.
 */
const timeMarginSeconds = 600;

/**
 * Reads across the archive's live segments (the manifest's, not deleted, as verified against the
 * pins), through DuckDB; each segment is checked whole before it is read. Each read has a deadline
 * (performance.now() milliseconds): past it DuckDB is interrupted and the read throws
 * ArchiveReadInterrupted, whatever it was doing. An archive that fails its verification throws
 * ArchiveUntrusted instead of answering without it.
 */
export class ArchiveReader {
  constructor(private readonly archive: TrustedArchive) {}

  /**
   * The first `query.rows` matching events after `query.after`, in log order. Segments are read in
   * the order of their first positions, a few at a time, and reading stops once no unread segment
   * can hold an earlier match than the ones found: a first page reads only the first segments.
   */
  async events(query: ArchiveEventQuery, deadline: number | undefined): Promise<ArchivedEvent[]> {
    const after = query.after ?? -1n;
    const candidates = (await this.archive.segments())
      .filter((segment) => BigInt(segment.segment.max_position) > after)
      .filter((segment) => query.since === undefined || Date.parse(segment.segment.max_time) >= query.since)
      .filter((segment) => query.until === undefined || Date.parse(segment.segment.min_time) < query.until)
      .sort((a, b) => compareBig(BigInt(a.segment.min_position), BigInt(b.segment.min_position)));
    if (candidates.length === 0 || query.rows <= 0) return [];
    const where: string[] = [];
    const values: DuckDBValue[] = [];
    const id = (column: string, value: string | undefined, form: IdForm) => {
      if (value === undefined) return;
      const uuid = idAsUuid(value, form);
      values.push(uuid ?? value);
      where.push(uuid === undefined ? `${column}_text = $${values.length}` : `${column} = $${values.length}::UUID`);
    };
    const text = (column: string, value: string | undefined) => {
      if (value === undefined) return;
      values.push(value);
      where.push(`${column} = $${values.length}`);
    };
    id('account_id', query.account, 'uuid');
    id('family_id', query.family, 'base64url16');
    text('api_login_id', query.apiLoginId);
    text('api_id', query.apiId);
    if (query.types.length > 0) where.push(`type IN (${query.types.map((type) => `'${sqlText(type)}'`).join(', ')})`);
    if (query.since !== undefined) where.push(`time >= ${Math.trunc(query.since)}`);
    if (query.until !== undefined) where.push(`time < ${Math.trunc(query.until)}`);
    where.push(`position > ${after}`);
    const found: ArchivedEvent[] = [];
    return this.withConnection(deadline, async (connection) => {
      for (let start = 0; start < candidates.length; start += segmentsPerRead) {
        const group = candidates.slice(start, start + segmentsPerRead);
        // Enough found, and every later segment starts after the last row wanted: stop.
        if (found.length >= query.rows && BigInt(group[0]!.segment.min_position) > found[query.rows - 1]!.position) break;
        this.archive.check(group);
        const sql = `SELECT ${eventColumns} FROM read_parquet(${this.files(group)}) WHERE ${where.join(' AND ')} ORDER BY position LIMIT ${query.rows}`;
        const reader = await connection.runAndReadAll(sql, values);
        found.push(...reader.getRows().map(rowToEvent));
        found.sort((a, b) => compareBig(a.position, b.position));
        found.splice(query.rows);
      }
      return found;
    });
  }

  /**
   * What access-at needs of the archive for one account at `at` (epoch seconds): every archived
   * family with a generation issued at or before `at` and expiring after it, with all of that
   * family's access events (families are archived whole, so they are in the same segment), and
   * every archived v1 token usable then. Only segments whose times reach from `at` minus the
   * longest token life they hold to `at` are read: a token usable at `at` was issued within that.
   */
  async accessAt(accountId: string, at: number, deadline: number | undefined): Promise<{ families: Map<string, { position: bigint; access: ArchivedAccess }[]>; singles: { position: bigint; access: ArchivedAccess }[] }> {
    const families = new Map<string, { position: bigint; access: ArchivedAccess }[]>();
    const singles: { position: bigint; access: ArchivedAccess }[] = [];
    const segments = (await this.archive.segments()).filter((segment) => {
      const from = (at - segment.segment.max_token_life_seconds - timeMarginSeconds) * 1000;
      const until = (at + timeMarginSeconds) * 1000;
      return Date.parse(segment.segment.max_time) >= from && Date.parse(segment.segment.min_time) <= until;
    });
    if (segments.length === 0) return { families, singles };
    const uuid = idAsUuid(accountId, 'uuid');
    const account = uuid === undefined ? 'account_id_text = $1' : 'account_id = $1::UUID';
    this.archive.check(segments);
    return this.withConnection(deadline, async (connection) => {
      const files = this.files(segments);
      const usable = await connection.runAndReadAll(
        `SELECT ${eventColumns} FROM read_parquet(${files})
          WHERE ${account} AND access_kind IN ('generation-issued', 'legacy-token-issued') AND issued_at <= ${at} AND expires_at > ${at}`,
        [uuid ?? accountId],
      );
      const familyIds = new Set<string>();
      for (const event of usable.getRows().map(rowToEvent)) {
        if (event.access?.kind === 'legacy-token-issued') singles.push({ position: event.position, access: event.access });
        else if (event.access?.kind === 'generation-issued') familyIds.add(event.access.familyId);
      }
      if (familyIds.size > 0) {
        const ids = [...familyIds];
        const byUuid = ids.map((familyId) => idAsUuid(familyId, 'base64url16'));
        const values: DuckDBValue[] = [];
        const terms = ids.map((familyId, index) => {
          values.push(byUuid[index] ?? familyId);
          return byUuid[index] === undefined ? `family_id_text = $${values.length}` : `family_id = $${values.length}::UUID`;
        });
        const rows = await connection.runAndReadAll(`SELECT ${eventColumns} FROM read_parquet(${files}) WHERE access_kind IS NOT NULL AND (${terms.join(' OR ')}) ORDER BY position`, values);
        for (const event of rows.getRows().map(rowToEvent)) {
          if (event.access === undefined || event.familyId === undefined) continue;
          const list = families.get(event.familyId) ?? [];
          list.push({ position: event.position, access: event.access });
          families.set(event.familyId, list);
        }
      }
      return { families, singles };
    });
  }

  /** Rows of the archive, and its segments, as last verified: for /metrics. */
  totals(): { segments: number; rows: number; bytes: number; oldest: string | undefined; newest: string | undefined } {
    let rows = 0;
    let bytes = 0;
    let oldest: string | undefined;
    let newest: string | undefined;
    const segments = this.archive.last()?.live ?? [];
    for (const { segment } of segments) {
      rows += segment.rows;
      bytes += segment.bytes;
      if (oldest === undefined || segment.min_time < oldest) oldest = segment.min_time;
      if (newest === undefined || segment.max_time > newest) newest = segment.max_time;
    }
    return { segments: segments.length, rows, bytes, oldest, newest };
  }

  private files(segments: readonly SegmentEntry[]): string {
    return `[${segments.map((segment) => `'${sqlText(join(this.archive.archiveDir, segment.segment.file))}'`).join(', ')}]`;
  }

  private async withConnection<T>(deadline: number | undefined, read: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    const connection = await (await duckdb()).connect();
    let interrupted = false;
    const timer =
      deadline === undefined
        ? undefined
        : setTimeout(
            () => {
              interrupted = true;
              connection.interrupt();
            },
            Math.max(0, deadline - performance.now()),
          );
    try {
      if (deadline !== undefined && performance.now() > deadline) throw new ArchiveReadInterrupted();
      return await read(connection);
    } catch (error) {
      if (interrupted) throw new ArchiveReadInterrupted();
      throw error;
    } finally {
      clearTimeout(timer);
      connection.closeSync();
    }
  }
}

const compareBig = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);
