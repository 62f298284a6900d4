import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TesseraEvent } from '@tessera/events';
import { EventStoreUnavailable } from '@tessera/event-store';
import { SqliteEventStore } from './sqlite-event-store.js';
import { guardAvailability } from '@tessera/event-store';
import { systemClock } from '@tessera/timing';

const registered = (accountId: string): TesseraEvent => ({ type: 'AccountRegistered', v: 1, accountId, name: 'writer', permissions: [], at: 1_700_000_000 });
/** The writer thread is private on purpose; a fault test reaches it to kill it, as a crash would. */
const writerOf = (store: SqliteEventStore) => (store as unknown as { writer: Worker }).writer;

describe('the SQLite writer thread killed under load', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-writer-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db') });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers every pending append durably or with EventStoreUnavailable, then restarts the writer', async () => {
    const guarded = guardAvailability(store, { minBackoffMs: 20, maxBackoffMs: 100 });
    const outcomes: Promise<{ stream: string; ok: boolean; error?: unknown }>[] = [];
    let killed = false;
    // Appends keep arriving for 400 ms; the writer is killed after 100 ms, mid-stream.
    const started = systemClock.now();
    let i = 0;
    while (systemClock.now() - started < 400) {
      for (let burst = 0; burst < 20; burst += 1) {
        const stream = `account-load-${(i += 1)}`;
        outcomes.push(
          guarded.append(stream, [{ event: registered(stream) }], { expectedRevision: 'no_stream' }).then(
            () => ({ stream, ok: true }),
            (error: unknown) => ({ stream, ok: false, error }),
          ),
        );
      }
      if (!killed && systemClock.now() - started > 100) {
        killed = true;
        await writerOf(store).terminate();
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const settled = await Promise.all(outcomes);
    const refused = settled.filter((outcome) => !outcome.ok);
    expect(refused.length).toBeGreaterThan(0);
    for (const outcome of refused) expect(outcome.error).toBeInstanceOf(EventStoreUnavailable);
    // A 200 means durable: every append that resolved is in the log.
    for (const outcome of settled.filter((o) => o.ok)) expect(await store.readStream(outcome.stream)).toHaveLength(1);

    await guarded.whenAvailable();
    await guarded.append('account-after-restart', [{ event: registered('after') }], { expectedRevision: 'no_stream' });
    expect(await store.readStream('account-after-restart')).toHaveLength(1);
    console.info(`[writer restart] ${settled.length - refused.length} appends durable, ${refused.length} refused with EventStoreUnavailable`);
  });

  it('restarts a writer that died while idle on the next append, without a guard', async () => {
    await store.append('account-one', [{ event: registered('one') }], { expectedRevision: 'no_stream' });
    // Resolves once the thread's exit has been reported, the store's own listener included.
    await writerOf(store).terminate();
    await store.append('account-two', [{ event: registered('two') }], { expectedRevision: 'no_stream' });
    expect(await store.readStream('account-two')).toHaveLength(1);
  });
});
