import { NotWithin, until as pollUntil } from '../support/until.js';
import type { HistoryRecorder, RecordingClient } from './history.js';
import type { SeededRandom } from './seeded-random.js';

/** One printed figure. */
export interface Figure {
  readonly scenario: string;
  readonly measure: string;
  readonly value: string;
}

export class ScenarioFailed extends Error {
  override readonly name = 'ScenarioFailed';
}

export function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new ScenarioFailed(message);
}

/** What every scenario records into and draws its random choices from. */
export interface SimContext {
  readonly recorder: HistoryRecorder;
  readonly random: SeededRandom;
  /** Runs `measure` with the background workload paused: latencies timed one request at a time are the request's, not the machine's load. */
  readonly quietly: <T>(measure: () => Promise<T>) => Promise<T>;
}

export interface Pair {
  readonly token: string;
  readonly refresh_token: string;
}

export const GET_TOKEN = '/v5/Authorization/get-oauth-token';
export const REFRESH = '/v5/Authorization/refresh-oauth-token';
export const REVOKE = '/v5/Authorization/revoke-oauth-token';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
};
export const ms = (value: number) => `${value.toFixed(1)} ms`;
export const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { fid: string; gen: number };
export const fidOf = (token: string) => claimsOf(token).fid;

/** A bearer check at a region: forward-auth, the route a proxy in front of a downstream service calls. */
export const check401 = (http: RecordingClient, token: string) => http.send('/forward-auth?permission=transaction:charge', { headers: { authorization: `Bearer ${token}` } });

/**
 * Polls until `probe` gives `want`, every `everyMs`: the time it took, or a ScenarioFailed after
 * `timeoutMs`. The scenarios' form of the tests' one polling helper.
 */
export async function until<T>(probe: () => Promise<T>, want: T, what: string, timeoutMs: number, everyMs = 5): Promise<number> {
  try {
    return (await pollUntil(probe, what, { done: (answer) => answer === want, timeoutMs, everyMs })).elapsedMs;
  } catch (error) {
    throw error instanceof NotWithin ? new ScenarioFailed(error.message) : error;
  }
}

export async function inBatches<T, R>(items: readonly T[], width: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await run(items[index]!);
      }
    }),
  );
  return results;
}

