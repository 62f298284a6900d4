import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { superviseConsumer } from './consumer-supervisor.js';

/** Stands in for a kafkajs consumer: the supervisor only listens for its crash and disconnects it. */
class ScriptedConsumer {
  private readonly events = new EventEmitter();
  disconnected = false;
  constructor(readonly serial: number) {}
  on(eventName: 'consumer.crash', listener: (event: { payload: { error: Error; restart: boolean } }) => void) {
    this.events.on(eventName, listener);
  }
  crash(restart: boolean) {
    this.events.emit('consumer.crash', { payload: { error: new Error(`consumer ${this.serial} crashed`), restart } });
  }
  async disconnect() {
    this.disconnected = true;
  }
}

function world(startOutcomes: ('runs' | 'fails')[] = []) {
  const created: ScriptedConsumer[] = [];
  const started: number[] = [];
  const crashes: { message: string; restarting: boolean }[] = [];
  const replacements: { attempt: number; failed: boolean }[] = [];
  const supervisor = superviseConsumer({
    create: () => {
      const consumer = new ScriptedConsumer(created.length + 1);
      created.push(consumer);
      return consumer;
    },
    start: async (consumer) => {
      started.push(consumer.serial);
      // The first start always runs; later ones follow the script, then run.
      if (consumer.serial > 1 && startOutcomes[consumer.serial - 2] === 'fails') throw new Error(`consumer ${consumer.serial} cannot connect`);
    },
    onCrash: (error, restarting) => crashes.push({ message: error.message, restarting }),
    onReplacement: ({ attempt, error }) => replacements.push({ attempt, failed: error !== undefined }),
    backoff: { initialMs: 100, maxMs: 10_000 },
  });
  return { supervisor, created, started, crashes, replacements };
}

describe('consumer supervisor', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('replaces a consumer that kafkajs will not restart, after the delay', async () => {
    const { supervisor, created, started, crashes, replacements } = world();
    await supervisor.start();
    created[0]!.crash(false);
    expect(crashes).toEqual([{ message: 'consumer 1 crashed', restarting: false }]);
    await vi.advanceTimersByTimeAsync(99);
    expect(started).toEqual([1]);
    await vi.advanceTimersByTimeAsync(1);
    expect(started).toEqual([1, 2]);
    expect(replacements).toEqual([{ attempt: 1, failed: false }]);
    expect(supervisor.replacements).toBe(1);
  });

  it('leaves a crash that kafkajs restarts itself to kafkajs', async () => {
    const { supervisor, created, started, crashes } = world();
    await supervisor.start();
    created[0]!.crash(true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(crashes).toEqual([{ message: 'consumer 1 crashed', restarting: true }]);
    expect(started).toEqual([1]);
    expect(supervisor.replacements).toBe(0);
  });

  it('keeps trying with growing delays while a replacement cannot start', async () => {
    const { supervisor, created, started, replacements } = world(['fails', 'fails']);
    await supervisor.start();
    created[0]!.crash(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(started).toEqual([1, 2]);
    await vi.advanceTimersByTimeAsync(199);
    expect(started).toEqual([1, 2]);
    await vi.advanceTimersByTimeAsync(1);
    expect(started).toEqual([1, 2, 3]);
    await vi.advanceTimersByTimeAsync(400);
    expect(started).toEqual([1, 2, 3, 4]);
    expect(replacements).toEqual([
      { attempt: 1, failed: true },
      { attempt: 2, failed: true },
      { attempt: 3, failed: false },
    ]);
    // A replacement that crashes the same way is replaced in turn.
    created[3]!.crash(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(started).toEqual([1, 2, 3, 4, 5]);
    expect(supervisor.replacements).toBe(2);
  });

  it('starts nothing after close, and disconnects the consumer it holds', async () => {
    const { supervisor, created, started } = world();
    await supervisor.start();
    created[0]!.crash(false);
    await supervisor.close();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(started).toEqual([1]);
    expect(created[0]!.disconnected).toBe(true);
  });

  it('leaves a crash during the first start to that start: it rejects, and nothing is replaced behind its caller', async () => {
    // kafkajs' run() crashes and returns when it cannot join the group; the start then rejects with the crash.
    const created: ScriptedConsumer[] = [];
    const crashes: boolean[] = [];
    const supervisor = superviseConsumer({
      create: () => {
        const consumer = new ScriptedConsumer(created.length + 1);
        created.push(consumer);
        return consumer;
      },
      start: async (consumer) => {
        consumer.crash(false);
        throw new Error(`consumer ${consumer.serial} could not join its group`);
      },
      onCrash: (_error, restarting) => crashes.push(restarting),
      onReplacement: () => undefined,
      backoff: { initialMs: 100, maxMs: 10_000 },
    });
    await expect(supervisor.start()).rejects.toThrow('consumer 1 could not join its group');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(created).toHaveLength(1);
    expect(crashes).toEqual([]);
  });

  it('counts a replacement that crashes while it starts once: one more try after the backoff, not two', async () => {
    const created: ScriptedConsumer[] = [];
    const supervisor = superviseConsumer({
      create: () => {
        const consumer = new ScriptedConsumer(created.length + 1);
        created.push(consumer);
        return consumer;
      },
      start: async (consumer) => {
        if (consumer.serial !== 2) return;
        consumer.crash(false);
        throw new Error('consumer 2 could not join its group');
      },
      onCrash: () => undefined,
      onReplacement: () => undefined,
      backoff: { initialMs: 100, maxMs: 10_000 },
    });
    await supervisor.start();
    created[0]!.crash(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(created).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(created).toHaveLength(3);
    expect(supervisor.replacements).toBe(1);
  });

  it('handles a crash during a start that resolved all the same once the start is done', async () => {
    const { supervisor, created, started, crashes } = world();
    // The scripted first start runs; its consumer crashes before the start returns.
    const starting = supervisor.start();
    created[0]!.crash(false);
    await starting;
    expect(crashes).toEqual([{ message: 'consumer 1 crashed', restarting: false }]);
    await vi.advanceTimersByTimeAsync(100);
    expect(started).toEqual([1, 2]);
  });

  it('ignores a late crash of a consumer it already replaced', async () => {
    const { supervisor, created, started } = world();
    await supervisor.start();
    created[0]!.crash(false);
    await vi.advanceTimersByTimeAsync(100);
    created[0]!.crash(false);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(started).toEqual([1, 2]);
  });
});
