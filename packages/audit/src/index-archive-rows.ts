import type Database from 'better-sqlite3';
import type { ArchivedEvent } from '@tessera/archive';
import type { AccessEvent } from './access-at.js';

/** What the archive keeps of an index row (the position, stream and revision come from the log), with the index's own access event. */
export type IndexRowForArchive = Omit<ArchivedEvent, 'position' | 'stream' | 'revision' | 'access'> & { readonly access: AccessEvent | undefined };

type ArchiveRowTuple = [
  position: bigint,
  type: string,
  time: bigint,
  account: string | null,
  family: string | null,
  generation: bigint | null,
  reason: string | null,
  request: string | null,
  source: string | null,
  actor: string | null,
  login: string | null,
  apiId: string | null,
  access: string | null,
];

/** The index's rows as the archive keeps them: what the archiver writes into a segment, read in one transaction. */
export class IndexArchiveRows {
  private readonly row: Database.Statement<[bigint], ArchiveRowTuple>;

  constructor(private readonly db: Database.Database) {
    this.row = db
      .prepare<[bigint], ArchiveRowTuple>(
        'SELECT position, type, time, account_id, family_id, generation, reason, request_id, source_address, actor, api_login_id, api_id, access FROM events WHERE position = ?',
      )
      .raw(true)
      .safeIntegers(true);
  }

  /** The rows at these positions (none for a position the index does not hold). */
  rowsAt(positions: readonly bigint[]): Map<bigint, IndexRowForArchive> {
    const rows = new Map<bigint, IndexRowForArchive>();
    this.db.transaction(() => {
      for (const position of positions) {
        const row = this.row.get(position);
        if (row === undefined) continue;
        const [, type, time, account, family, generation, reason, request, source, actor, login, apiId, access] = row;
        rows.set(position, {
          type,
          time: Number(time),
          accountId: account ?? undefined,
          familyId: family ?? undefined,
          generation: generation === null ? undefined : Number(generation),
          reason: reason ?? undefined,
          requestId: request ?? undefined,
          sourceAddress: source ?? undefined,
          actor: actor ?? undefined,
          apiLoginId: login ?? undefined,
          apiId: apiId ?? undefined,
          // Cast: the index's own JSON of an AccessEvent, written by IndexIngest; an index of another version is rebuilt, never read.
          access: access === null ? undefined : (JSON.parse(access) as AccessEvent),
        });
      }
    })();
    return rows;
  }
}
