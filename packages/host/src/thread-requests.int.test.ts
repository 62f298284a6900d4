import { afterAll, describe, expect, it } from 'vitest';
import { startBackgroundWorker, ThreadExited } from './thread-requests.js';

/**
 * A request to a background thread has a bound even when the thread never answers it: what lets
 * the admin API answer an audit query within its budget and a grace, whatever the thread is doing.
 */
type FixtureRequest = { readonly id: number; readonly silent?: boolean; readonly close?: boolean };
type FixtureReply = { readonly id: number; readonly answered: true };

const failures: Error[] = [];
const thread = startBackgroundWorker<FixtureRequest, FixtureReply>({
  name: 'fixture',
  besideUrl: import.meta.url,
  entry: 'thread-requests-fixture.test',
  workerData: undefined,
  onNotice: () => undefined,
  onFailure: (error) => failures.push(error),
});
afterAll(() => thread.close((id) => ({ id, close: true })));

class Overdue extends Error {}

describe('a background thread\'s requests', () => {
  it('resolves with the reply that carries the request\'s id', async () => {
    await expect(thread.ask((id) => ({ id }), 10_000, () => new Overdue())).resolves.toMatchObject({ answered: true });
  });

  it('rejects with the caller\'s error once the wait is over when the thread does not answer, and the thread still answers the next', async () => {
    const started = performance.now();
    await expect(thread.ask((id) => ({ id, silent: true }), 300, () => new Overdue('over its wait'))).rejects.toThrow(Overdue);
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(295);
    expect(waited).toBeLessThan(3_000);
    await expect(thread.ask((id) => ({ id }), 10_000, () => new Overdue())).resolves.toMatchObject({ answered: true });
    expect(failures).toEqual([]);
  });

  it('fails a pending request with ThreadExited, a coded error, when the thread ends unasked', async () => {
    const exits: Error[] = [];
    const ending = startBackgroundWorker<FixtureRequest, FixtureReply>({
      name: 'fixture',
      besideUrl: import.meta.url,
      entry: 'thread-requests-fixture.test',
      workerData: undefined,
      onNotice: () => undefined,
      onFailure: (error) => exits.push(error),
    });
    // The fixture ends its thread on a close request; sent with ask, the exit is one nobody asked for.
    await expect(ending.ask((id) => ({ id, close: true }), 10_000, () => new Overdue())).rejects.toMatchObject({ code: 'ERR_THREAD_EXITED', message: 'the fixture thread exited (0)' });
    expect(exits).toHaveLength(1);
    expect(exits[0]).toBeInstanceOf(ThreadExited);
  });
});
