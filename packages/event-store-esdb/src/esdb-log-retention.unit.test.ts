import { describe, expect, it } from 'vitest';
import { EventStoreUnavailable } from '@tessera/event-store';
import { EsdbLogRetention, type EsdbRetentionClient } from './esdb-log-retention.js';

/**
 * The retention calls up to the network edge, against a double of the client: what the adapter
 * asks EventStoreDB for. What a server does with `$tb` is for the suite against a real server
 * (esdb-event-store.int.test.ts, skipped loudly without one).
 */
function client(fail?: Error): EsdbRetentionClient & { calls: { stream: string; metadata: unknown }[] } {
  const calls: { stream: string; metadata: unknown }[] = [];
  return {
    calls,
    // Cast: the double answers the one call the adapter makes, with the shape it reads (nothing).
    setStreamMetadata: (async (stream: string, metadata: unknown) => {
      if (fail) throw fail;
      calls.push({ stream, metadata });
      return { success: true, nextExpectedRevision: 0n, position: undefined };
    }) as unknown as EsdbRetentionClient['setStreamMetadata'],
    dispose: async () => undefined,
  };
}

describe('EventStoreDB retention', () => {
  it('sets $tb on each stream to the first revision it keeps', async () => {
    const double = client();
    const retention = new EsdbLogRetention({ connectionString: 'esdb://unused' }, double);
    await retention.remove([
      { stream: 'tokenfamily-a', positions: [10n, 12n], truncateBefore: 2n },
      { stream: 'legacytokens-b', positions: [11n], truncateBefore: 5n },
    ]);
    expect(double.calls).toEqual([
      { stream: 'tokenfamily-a', metadata: { truncateBefore: 2 } },
      { stream: 'legacytokens-b', metadata: { truncateBefore: 5 } },
    ]);
    expect(retention.bytesOnDisk()).toBeUndefined();
  });

  it('a server that cannot be reached is an outage, as every other call of the adapter', async () => {
    const unavailable = Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14 });
    const retention = new EsdbLogRetention({ connectionString: 'esdb://unused' }, client(unavailable));
    await expect(retention.remove([{ stream: 'tokenfamily-a', positions: [1n], truncateBefore: 1n }])).rejects.toBeInstanceOf(EventStoreUnavailable);
  });
});
