/**
 * The one polling helper of the tests, the region simulator and the power-cut machine: asks
 * `probe` until `done` accepts its answer, and fails naming what it waited for, with the last
 * answer, once `timeoutMs` has passed. It waits for something to happen and returns as soon as it
 * has, so a generous bound costs a passing run nothing and spares a busy machine a false failure.
 * (Inside a vitest assertion, `expect.poll` does the same job with the assertion's own message.)
 */
export interface UntilOptions<T> {
  /** Whether an answer is the one awaited; by default, any truthy answer. */
  readonly done?: (answer: T) => boolean;
  readonly timeoutMs?: number;
  /** The pause between two probes. */
  readonly everyMs?: number;
}

export interface Awaited<T> {
  /** The answer `done` accepted. */
  readonly answer: T;
  /** From the first probe to the accepted answer. */
  readonly elapsedMs: number;
}

/** What `until` throws when the bound passes: a scenario's expected failure, not a crash. */
export class NotWithin extends Error {
  override readonly name = 'NotWithin';
}

export async function until<T>(probe: () => T | Promise<T>, what: string, options: UntilOptions<T> = {}): Promise<Awaited<T>> {
  const { done = Boolean, timeoutMs = 15_000, everyMs = 100 } = options;
  const started = performance.now();
  for (;;) {
    const answer = await probe();
    const elapsedMs = performance.now() - started;
    if (done(answer)) return { answer, elapsedMs };
    if (elapsedMs > timeoutMs) throw new NotWithin(`${what}: not within ${timeoutMs} ms (last answer: ${describe(answer)})`);
    await new Promise((resolvePause) => setTimeout(resolvePause, everyMs));
  }
}

function describe(answer: unknown): string {
  if (typeof answer === 'object' && answer !== null && 'status' in answer) return `status ${String(answer.status)}`;
  const text = typeof answer === 'string' ? answer : JSON.stringify(answer) ?? String(answer);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
