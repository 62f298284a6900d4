import { describe, expect, it } from 'vitest';
import { streams, type ArchiveTrustEvent, type RecordedEvent } from '@tessera/events';
import { ExpectedRevisionConflict, InMemoryEventStore } from '@tessera/event-store';
import { archiveTrustIn, logPinsSource, pinsOf, readArchivePins } from './archive-trust.js';

const at = 1_900_000_000_123;
const recorded = (events: readonly ArchiveTrustEvent[]): RecordedEvent[] =>
  events.map((event, i) => ({ eventId: `e-${i}`, stream: streams.archiveTrust(), revision: BigInt(i), position: BigInt(i + 1), event, metadata: {}, recordedAt: at }));

describe('the pins the log\'s anchors make', () => {
  it('are every key recorded and the newest head, whatever order the heads were recorded in', () => {
    const pins = pinsOf(
      recorded([
        { type: 'ArchiveKeyTrusted', v: 1, fingerprint: 'a'.repeat(64), source: 'made', at: 1 },
        { type: 'ArchiveHeadRecorded', v: 1, sequence: 2, sha256: '2'.repeat(64), at: 2 },
        { type: 'ArchiveKeyTrusted', v: 1, fingerprint: 'b'.repeat(64), source: 'adopted', at: 3 },
        { type: 'ArchiveHeadRecorded', v: 1, sequence: 1, sha256: '1'.repeat(64), at: 4 },
      ]),
    );
    expect(pins).toEqual({ keys: new Set(['a'.repeat(64), 'b'.repeat(64)]), head: { sequence: 2, sha256: '2'.repeat(64) }, source: logPinsSource });
  });

  it('are no key and no head in a log with no anchors yet', async () => {
    expect(await readArchivePins(new InMemoryEventStore())).toEqual({ keys: new Set(), head: undefined, source: 'the event log' });
  });
});

describe('the anchors in the log', () => {
  it('are appended to the archive\'s own stream, as the archiver, at whole seconds, and read back as pins', async () => {
    const store = new InMemoryEventStore();
    const trust = archiveTrustIn(store, async () => store);
    await trust.trustKey('a'.repeat(64), 'made', at);
    await trust.recordHead({ sequence: 1, sha256: '1'.repeat(64) }, at);
    const written = await store.readStream(streams.archiveTrust());
    expect(written.map(({ event, metadata }) => [event, metadata.actor])).toEqual([
      [{ type: 'ArchiveKeyTrusted', v: 1, fingerprint: 'a'.repeat(64), source: 'made', at: Math.floor(at / 1000) }, 'archiver'],
      [{ type: 'ArchiveHeadRecorded', v: 1, sequence: 1, sha256: '1'.repeat(64), at: Math.floor(at / 1000) }, 'archiver'],
    ]);
    expect(await trust.pins()).toEqual({ keys: new Set(['a'.repeat(64)]), head: { sequence: 1, sha256: '1'.repeat(64) }, source: logPinsSource });
  });

  it('are written through a store opened only when the first anchor is: reading the pins opens none', async () => {
    const store = new InMemoryEventStore();
    let opened = 0;
    const trust = archiveTrustIn(store, async () => {
      opened += 1;
      return store;
    });
    await trust.pins();
    expect(opened).toBe(0);
    await trust.recordHead({ sequence: 1, sha256: '1'.repeat(64) }, at);
    expect(opened).toBe(1);
  });

  it('go after the stream\'s last revision as read: a head another process recorded meanwhile refuses this one', async () => {
    const store = new InMemoryEventStore();
    await archiveTrustIn(store, async () => store).recordHead({ sequence: 1, sha256: '1'.repeat(64) }, at);
    // This process read the stream before the other's head was recorded.
    const behind = archiveTrustIn({ readStream: async () => [] }, async () => store);
    await expect(behind.recordHead({ sequence: 1, sha256: 'f'.repeat(64) }, at)).rejects.toBeInstanceOf(ExpectedRevisionConflict);
    expect((await readArchivePins(store)).head).toEqual({ sequence: 1, sha256: '1'.repeat(64) });
  });
});
