import type Database from 'better-sqlite3';
import type { IndexMeta } from './index-meta.js';

/**
 * The query planner's statistics (ANALYZE), from a sample (analysis_limit) so that taking them
 * stays cheap: most filters have several indexes to choose from, and the planner picks by them.
 */
export class PlannerStatistics {
  constructor(
    private readonly db: Database.Database,
    private readonly meta: IndexMeta,
  ) {}

  /**
   * Taken again each time the index has doubled since they were last taken: a plan chosen from the
   * statistics of a near-empty index (a server started on a young log) would scan every row once
   * the index has grown.
   */
  keepTrue(position: bigint | undefined): void {
    if (position === undefined) return;
    const analyzedAt = BigInt(this.meta.get('analyzed_at') ?? '0');
    if (position < 1000n || position < analyzedAt * 2n) return;
    this.take(position);
  }

  take(position: bigint | undefined): void {
    this.db.pragma('analysis_limit = 1000');
    this.db.exec('ANALYZE');
    if (position !== undefined) this.meta.set('analyzed_at', position.toString());
  }
}
