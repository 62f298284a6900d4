import { describe, expect, it } from 'vitest';
import type { RecordedEvent, SigningKeyEvent } from '@tessera/events';
import type { EventStore } from './event-store.js';
import { earliestUsableKeyPublication, revocationRebuildAfter } from './revocation-window.js';

const jwk = { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' } as const;
const recorded = (position: number, event: SigningKeyEvent): RecordedEvent => ({
  eventId: `e${position}`,
  stream: 'signingkeys',
  revision: BigInt(position),
  position: BigInt(position),
  event,
  metadata: {},
  recordedAt: position * 1_000,
});
const published = (position: number, kid: string) => recorded(position, { type: 'SigningKeyPublished', v: 1, kid, alg: 'ES256', publicJwk: jwk, at: position });
const retired = (position: number, kid: string, retainUntil: number) => recorded(position, { type: 'SigningKeyRetired', v: 1, kid, at: position, retainUntil });

describe('earliestUsableKeyPublication', () => {
  it('is the first publication of a key that is current or retained past now', () => {
    const keys = [published(10, 'k1'), published(20, 'k2'), retired(21, 'k1', 5_000), published(30, 'k3'), retired(31, 'k2', 9_000)];
    expect(earliestUsableKeyPublication(keys, 4_999)?.position).toBe(10n);
    // k1 is refused from its retainUntil on, as the key set refuses it.
    expect(earliestUsableKeyPublication(keys, 5_000)?.position).toBe(20n);
    expect(earliestUsableKeyPublication(keys, 9_000)?.position).toBe(30n);
  });

  it('is undefined when no key is usable, and keeps the first of two publications of one kid', () => {
    expect(earliestUsableKeyPublication([], 0)).toBeUndefined();
    expect(earliestUsableKeyPublication([published(1, 'k1'), retired(2, 'k1', 100)], 100)).toBeUndefined();
    expect(earliestUsableKeyPublication([published(3, 'k1'), published(7, 'k1')], 0)?.position).toBe(3n);
  });
});

/** The three reads revocationRebuildAfter makes. */
function storeWith(
  keys: RecordedEvent[],
  head: bigint | undefined,
  positionBefore: (epochMs: number) => bigint | undefined,
): Pick<EventStore, 'headPosition' | 'readStream' | 'positionBefore'> {
  return {
    headPosition: async () => head,
    readStream: async (stream: string) => (stream === 'signingkeys' ? keys : []),
    positionBefore: async (epochMs: number) => positionBefore(epochMs),
  };
}

describe('revocationRebuildAfter', () => {
  it("starts just before the earliest usable key's publication, found by its recording time", async () => {
    const asked: number[] = [];
    const store = storeWith([published(10, 'k1'), retired(11, 'k1', 500), published(40, 'k2')], 99n, (epochMs) => {
      asked.push(epochMs);
      return 39n;
    });
    expect(await revocationRebuildAfter(store, 1_000)).toBe(39n);
    expect(asked).toEqual([40_000]);
  });

  it('starts at the head when no key is usable: tokens can only come from keys published later', async () => {
    const store = storeWith([published(10, 'k1'), retired(11, 'k1', 500)], 99n, () => 0n);
    expect(await revocationRebuildAfter(store, 1_000)).toBe(99n);
  });

  it('reads the whole log rather than trust a position that is not before the key', async () => {
    expect(await revocationRebuildAfter(storeWith([published(40, 'k2')], 99n, () => 40n), 0)).toBeUndefined();
    expect(await revocationRebuildAfter(storeWith([published(40, 'k2')], 99n, () => undefined), 0)).toBeUndefined();
  });
});
