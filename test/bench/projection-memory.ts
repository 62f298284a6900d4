import { startChild } from './children.js';

/** Parent side of projection-memory-child.ts: its own process, with --expose-gc. */
export interface ProjectionResult {
  readonly memory: {
    readonly entries: number;
    readonly heapBytes: number;
    readonly bytesPerEntry: number;
    readonly applySeconds: number;
    readonly rssBytes: number;
  };
  readonly sqlite: {
    readonly entries: number;
    readonly appendSeconds: number;
    readonly appendEventsPerSecond: number;
    readonly logFileBytes: number;
    readonly rebuildSeconds: number;
    readonly bytesPerEntry: number;
  };
}

export async function measureProjection(entries: number): Promise<ProjectionResult> {
  const child = await startChild<ProjectionResult>('projection-memory-child.ts', {
    nodeFlags: ['--expose-gc', '--max-old-space-size=4096'],
    env: { BENCH_PROJECTION_ENTRIES: String(entries) },
    timeoutMs: 20 * 60_000,
    forwardStderr: true,
  });
  await child.stop();
  return child.ready;
}
