import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteEventStore } from './sqlite-event-store.js';

/**
 * SQLite prepares a statement again at every run when the planner may read one of its bare
 * parameters, since another value might want another plan: a LIMIT, or (better-sqlite3 builds it
 * with STAT4) a value compared with an indexed column. On the log's hot statements (the stream
 * read of every refresh, the live-tail read after every commit, the writer's revision check of
 * every append) that was 3–7 µs a run. Written `(SELECT ?)`, the parameter is a constant subquery:
 * one plan, which still uses the index.
 */
const bareComparison = /\b[a-z_]+\s*(?:=|==|!=|<>|<=|>=|<|>)\s*\?|\bLIMIT\s+\?/i;

describe('SQLite log statements: no bare parameter the planner reads, and the indexes still serve them', () => {
  let dir: string;
  let store: SqliteEventStore;
  let statements: Record<string, Database.Statement>;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-statements-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db') });
    // Cast: the prepared statements are private to the store; the test reads their SQL only.
    statements = (store as unknown as { statements: Record<string, Database.Statement> }).statements;
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the reading connection has no bare parameter in a comparison with a column or in a LIMIT', () => {
    const sources = Object.entries(statements).map(([name, statement]) => ({ name, sql: statement.source }));
    expect(sources.length).toBeGreaterThan(5);
    expect(sources.filter(({ sql }) => bareComparison.test(sql))).toEqual([]);
  });

  it("the writer thread's statements have no bare parameter in a comparison with a column or in a LIMIT", () => {
    const writer = readFileSync(new URL('./sqlite-writer-worker.ts', import.meta.url), 'utf8');
    const prepared = [...writer.matchAll(/db\.prepare\(\s*'([^']+)'/g)].map((match) => match[1]!);
    expect(prepared.length).toBeGreaterThanOrEqual(4);
    expect(prepared.filter((sql) => bareComparison.test(sql))).toEqual([]);
  });

  it('a stream read searches the (stream, revision) index, a tail read ranges the positions, and none sorts', () => {
    const db = new Database(join(dir, 'events.db'), { readonly: true });
    try {
      const plan = (statement: Database.Statement, ...parameters: unknown[]) =>
        db
          .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${statement.source}`)
          .all(...parameters)
          .map(({ detail }) => detail)
          .join('; ');
      expect(plan(statements.backwards!, 'tokenfamily-x', 1)).toMatch(/SEARCH events USING (COVERING )?INDEX sqlite_autoindex_events_\d \(stream=\?\)/);
      expect(plan(statements.forwards!, 'tokenfamily-x', 1)).toMatch(/SEARCH events USING (COVERING )?INDEX sqlite_autoindex_events_\d \(stream=\?\)/);
      expect(plan(statements.tail!, 0, 256)).toMatch(/SEARCH events USING INTEGER PRIMARY KEY \(rowid>\?\)/);
      for (const name of ['backwards', 'forwards', 'tail', 'ofType', 'all']) expect(plan(statements[name]!, ...(name === 'ofType' ? ['TokenRevoked', 0, 256] : name === 'tail' || name === 'all' ? [0, 256] : ['tokenfamily-x', 1]))).not.toMatch(/TEMP B-TREE/);
      expect(plan(statements.ofType!, 'TokenRevoked', 0, 256)).toMatch(/SEARCH events USING (COVERING )?INDEX events_type_position \(type=\? AND (position|rowid)>\?\)/);
    } finally {
      db.close();
    }
  });
});
