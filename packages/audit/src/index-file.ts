import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { ownerOnlySqliteFile, ownerOnlySqliteSidecars } from '@tessera/event-store-sqlite';
import { indexSchema, indexTables, indexVersion } from './audit-index-schema.js';
import { errorCode } from '@tessera/contracts';

/**
 * Page cache, in KiB (SQLite counts a negative cache_size so). This connection is the only one that
 * writes the index, so no other connection's commit ever empties its cache: it keeps every page the
 * index's nine B-trees have touched until it is full, and its size is memory the process holds for
 * good. So it is small, and the queries read what it lacks from the OS's file cache, which the
 * system can take back. A bulk load gets more while it builds the indexes, and gives it back after.
 */
export const pageCacheKiB = { usual: 4 * 1024, bulk: 128 * 1024 };

/**
 * Opens the index in `file` (`:memory:` for a test), making it when missing, and hands the
 * connection to `use`; a file that is not an index of this version (corrupt, another program's,
 * older) is emptied or replaced, and the index then fills again from the log. `rebuilt` says so.
 * `use` runs inside the same attempt: a file that fails it as unusable is replaced too.
 */
export function openIndexFile<T>(file: string, use: (db: Database.Database, rebuilt: boolean) => T): T {
  try {
    return openAs(file, false, use);
  } catch (error) {
    if (file === ':memory:' || !unusableFile(error)) throw error;
    // Derived data: removed and made again. A second failure is not ours to hide.
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
    return openAs(file, true, use);
  }
}

function openAs<T>(file: string, replaced: boolean, use: (db: Database.Database, rebuilt: boolean) => T): T {
  if (file !== ':memory:') {
    // The index names accounts, families and addresses: only the service's user may read it.
    ownerOnlySqliteFile(file);
  }
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    if (file !== ':memory:') ownerOnlySqliteSidecars(file);
    // Derived data: a commit lost in a power cut is read again from the log. No fsync per batch.
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    // The WAL is emptied by checkpoints but keeps its size; a bulk load would leave it as large as the index.
    db.pragma('journal_size_limit = 33554432');
    db.pragma(`cache_size = -${pageCacheKiB.usual}`);
    const version = tableExists(db, 'meta') ? db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'version'").get()?.value : undefined;
    const outdated = version !== indexVersion && (version !== undefined || tableExists(db, 'events'));
    // Written only when needed: opening an index another process is filling must not wait for it.
    if (version !== indexVersion) {
      if (outdated) db.transaction(() => { for (const table of indexTables) db.exec(`DROP TABLE IF EXISTS ${table}`); }).immediate();
      // Rows leave the index as they are archived: an index with no table yet gives their space
      // back to the file system (incremental vacuum), one made before this release first becomes so.
      if (Number(db.pragma('auto_vacuum', { simple: true })) !== 2) {
        db.pragma('auto_vacuum = INCREMENTAL');
        db.exec('VACUUM');
      }
      db.transaction(() => {
        db.exec(indexSchema);
        stampVersion(db);
      }).immediate();
    }
    return use(db, replaced || outdated);
  } catch (error) {
    db.close();
    throw error;
  }
}

/** Empties every table, in one transaction, and stamps the version again: the index fills from the log as a new one does. */
export function emptyIndex(db: Database.Database): void {
  db.transaction(() => {
    for (const table of indexTables) db.exec(`DELETE FROM ${table}`);
    stampVersion(db);
  }).immediate();
}

function stampVersion(db: Database.Database): void {
  db.prepare("INSERT INTO meta (key, value) VALUES ('version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(indexVersion);
}

/**
 * Errors that say the file cannot serve as an index: not a database, damaged, or one this user may
 * not write (made by root, say). A busy or locked file is another process at work, not damage.
 */
function unusableFile(error: unknown): boolean {
  const code = errorCode(error);
  if (code === undefined) return false;
  return code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT') || code.startsWith('SQLITE_READONLY') || code === 'SQLITE_CANTOPEN' || code === 'EACCES' || code === 'EPERM';
}

function tableExists(db: Database.Database, name: string): boolean {
  return db.prepare<[string], { found: number }>("SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}
