import { describe, expect, it } from 'vitest';
import type { ControlRegionChanged } from '@tessera/contracts';
import { ControlRegionFence, evolveControlRegion, initialControlRegion, promoteControlRegion } from './control-region.js';
import { DomainError } from './errors.js';

const change = (region: string, epoch: number): ControlRegionChanged => ({ type: 'ControlRegionChanged', v: 1, region, epoch, recordedIn: region, at: 1 });
const refusal = (fence: ControlRegionFence) => {
  try {
    fence.checkAccountWrite();
    return undefined;
  } catch (error) {
    return error instanceof DomainError ? { code: error.code, message: error.message } : { code: 'other', message: String(error) };
  }
};

describe('the control region', () => {
  it('starts at epoch 0 on the configured region; the highest epoch wins, in any order', () => {
    const events = [change('b', 1), change('c', 3), change('a', 2)];
    const forward = events.reduce(evolveControlRegion, initialControlRegion('a'));
    const backward = [...events].reverse().reduce(evolveControlRegion, initialControlRegion('a'));
    expect(forward).toEqual({ region: 'c', epoch: 3 });
    expect(backward).toEqual(forward);
  });

  it('settles two promotions to one epoch the same way everywhere: the region whose name sorts first', () => {
    const one = [change('c', 1), change('b', 1)].reduce(evolveControlRegion, initialControlRegion('a'));
    const other = [change('b', 1), change('c', 1)].reduce(evolveControlRegion, initialControlRegion('a'));
    expect(one).toEqual({ region: 'b', epoch: 1 });
    expect(other).toEqual(one);
  });

  it('promotes with an epoch one above the highest seen', () => {
    expect(promoteControlRegion({ region: 'a', epoch: 4 }, { region: 'b', recordedIn: 'c', now: 9 })).toEqual({ type: 'ControlRegionChanged', v: 1, region: 'b', epoch: 5, recordedIn: 'c', at: 9 });
  });
});

describe('the fence every writer of accounts checks', () => {
  it('refuses until every source is read, then allows only the control region, naming it elsewhere', () => {
    const inA = new ControlRegionFence('a', 'a', ['log', 'b.tessera.accounts']);
    expect(refusal(inA)?.code).toBe('ERR_CONTROL_REGION_UNCONFIRMED');
    expect(refusal(inA)?.message).toContain('b.tessera.accounts');
    inA.caughtUp('log');
    inA.caughtUp('b.tessera.accounts');
    expect(refusal(inA)).toBeUndefined();
    const inB = new ControlRegionFence('b', 'a');
    expect(refusal(inB)?.code).toBe('ERR_NOT_CONTROL_REGION');
    expect(refusal(inB)?.message).toContain('control region, a (epoch 0)');
  });

  it('refuses from the moment it sees a newer epoch naming another region, and a stale older one changes nothing', () => {
    const inA = new ControlRegionFence('a', 'a');
    inA.apply(change('b', 2));
    expect(refusal(inA)?.message).toContain('control region, b (epoch 2)');
    inA.apply(change('a', 1));
    expect(refusal(inA)?.code).toBe('ERR_NOT_CONTROL_REGION');
    const inB = new ControlRegionFence('b', 'a');
    inB.apply(change('b', 1));
    expect(refusal(inB)).toBeUndefined();
  });
});
