import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ErrorCode } from '@tessera/contracts';
import { InvalidTimingArgument } from './invalid-timing-argument.js';
import { ManualClock, epochSeconds, systemClock } from './clock.js';

describe('clocks', () => {
  it('the system clock reads the machine time in epoch milliseconds', () => {
    const before = Date.now();
    const read = systemClock.now();
    expect(read).toBeGreaterThanOrEqual(before);
    expect(read).toBeLessThanOrEqual(Date.now());
  });

  it('epochSeconds rounds down to whole seconds', () => {
    expect(epochSeconds(new ManualClock(1_700_000_000_999))).toBe(1_700_000_000);
  });

  it('a manual clock moves only when told to, and only forward', () => {
    const clock = new ManualClock(5_000);
    expect(clock.now()).toBe(5_000);
    clock.advance(250);
    expect(clock.now()).toBe(5_250);
    clock.set(9_000);
    expect(clock.now()).toBe(9_000);
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(() => clock.set(8_999)).toThrow(RangeError);
  });
});

describe('InvalidTimingArgument', () => {
  it('carries ERR_INVALID_ARGUMENT, an ErrorCode, though this package depends on nothing', () => {
    expectTypeOf<InvalidTimingArgument['code']>().toExtend<ErrorCode>();
    const error = new InvalidTimingArgument('a clock only moves forward');
    expect(error).toBeInstanceOf(RangeError);
    expect(error.code).toBe('ERR_INVALID_ARGUMENT');
  });
});
