import { describe, expect, it } from 'vitest';
import { UsedAssertionIds } from './used-assertion-ids.js';

describe('UsedAssertionIds', () => {
  it('spends a jti once per client, and forgets it only once its time has passed', () => {
    const used = new UsedAssertionIds();
    expect(used.spend('client-a', 'j1', 1060, 1000)).toBe(true);
    expect(used.spend('client-a', 'j1', 1060, 1030)).toBe(false);
    // Another client's jti is another assertion.
    expect(used.spend('client-b', 'j1', 1060, 1030)).toBe(true);
    expect(used.spend('client-a', 'j1', 1060, 1060)).toBe(false);
    expect(used.spend('client-a', 'j1', 1120, 1061)).toBe(true);
  });

  it('when full of live jtis, refuses a new one rather than forget one that could be replayed', () => {
    const used = new UsedAssertionIds(2);
    expect(used.spend('c', 'j1', 1300, 1000)).toBe(true);
    expect(used.spend('c', 'j2', 1100, 1000)).toBe(true);
    expect(used.spend('c', 'j3', 1300, 1000)).toBe(false);
    expect(used.spend('c', 'j1', 1300, 1000)).toBe(false);
    // Once j2 has expired there is room again.
    expect(used.spend('c', 'j3', 1300, 1101)).toBe(true);
    expect(used.size).toBe(2);
  });
});
