import { describe, expect, it } from 'vitest';
import { loadConfig } from '@tessera/config';
import { streams, type ControlRegionChanged, type RecordedEvent } from '@tessera/events';
import { ControlRegionFence } from '@tessera/domain';
import { controlRegionFenceOf, localLogSource, readControlRegion, type ControlRegionLog } from './control-region.js';

const secret = 's'.repeat(32);
/** Region eu1, the control region, as the region settings give it. */
const controlEu1 = { own: 'eu1', control: 'eu1' };
const promotion = (region: string, epoch: number): ControlRegionChanged => ({ type: 'ControlRegionChanged', v: 1, region, epoch, recordedIn: 'eu1', at: 1_900_000_000 });

/** This region's log, holding `events` in its control-region stream. */
function logOf(...events: ControlRegionChanged[]): ControlRegionLog & { readonly asked: string[] } {
  const asked: string[] = [];
  const recorded: RecordedEvent[] = events.map((event, i) => ({ eventId: `e-${i}`, stream: streams.controlRegion(), revision: BigInt(i), position: BigInt(i + 1), event, metadata: {}, recordedAt: 1_900_000_000_000 }));
  return {
    asked,
    readStream: async (stream) => {
      asked.push(stream);
      return stream === streams.controlRegion() ? recorded : [];
    },
  };
}

describe('the control region\'s fence', () => {
  it('is none without a control region: one region, or regions from before the fence', () => {
    expect(controlRegionFenceOf(loadConfig({ TESSERA_REGION: 'eu1' }), { own: 'eu1', control: undefined })).toBeUndefined();
    expect(controlRegionFenceOf(loadConfig({}), undefined)).toBeUndefined();
  });

  it('waits for this region\'s log and each mirrored account topic, not for the revocation topics', () => {
    const fence = controlRegionFenceOf(
      loadConfig({ TESSERA_REGION: 'eu1', TESSERA_CONTROL_REGION: 'eu1', TESSERA_PEER_REGIONS: 'us1=https://x:1,ap2=https://y:1', TESSERA_PEER_SECRET: secret, TESSERA_KAFKA_BROKERS: 'k:9092' }),
      controlEu1,
    );
    expect(fence?.waitingFor).toEqual([localLogSource, 'us1.tessera.accounts', 'ap2.tessera.accounts']);
    expect(fence?.current).toEqual({ region: 'eu1', epoch: 0 });
  });
});

describe('a command-line writer reading the control region', () => {
  it('applies this region\'s recorded promotions and then counts its own log as read: with no mirrored topic, the fence opens', async () => {
    const config = loadConfig({ TESSERA_REGION: 'eu1', TESSERA_CONTROL_REGION: 'eu1' });
    const fence = controlRegionFenceOf(config, controlEu1)!;
    const log = logOf(promotion('us1', 1), promotion('eu1', 2));
    await readControlRegion(config, fence, log);
    expect(log.asked).toEqual([streams.controlRegion()]);
    expect(fence.current).toEqual({ region: 'eu1', epoch: 2 });
    expect(fence.waitingFor).toEqual([]);
    expect(() => fence.checkAccountWrite()).not.toThrow();
  });

  it('refuses the write once the log says the control region moved elsewhere', async () => {
    const config = loadConfig({ TESSERA_REGION: 'eu1', TESSERA_CONTROL_REGION: 'eu1' });
    const fence = controlRegionFenceOf(config, controlEu1)!;
    await readControlRegion(config, fence, logOf(promotion('us1', 1)));
    expect(fence.current).toEqual({ region: 'us1', epoch: 1 });
    expect(() => fence.checkAccountWrite()).toThrow(expect.objectContaining({ code: 'ERR_NOT_CONTROL_REGION' }));
  });

  it('without Kafka, a fence that also waits for a mirrored account topic keeps waiting for it: the write is refused, never made on a guess', async () => {
    const config = loadConfig({ TESSERA_REGION: 'eu1', TESSERA_CONTROL_REGION: 'eu1' });
    const fence = new ControlRegionFence('eu1', 'eu1', [localLogSource, 'us1.tessera.accounts']);
    await readControlRegion(config, fence, logOf());
    expect(fence.waitingFor).toEqual(['us1.tessera.accounts']);
    expect(() => fence.checkAccountWrite()).toThrow(expect.objectContaining({ code: 'ERR_CONTROL_REGION_UNCONFIRMED' }));
  });
});
