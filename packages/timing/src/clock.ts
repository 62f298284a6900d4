import { InvalidTimingArgument } from './invalid-timing-argument.js';
/**
 * Where time comes from. Everything in Tessera that reads the time takes a Clock (the way jose
 * takes `currentDate`), so a test sets the time instead of sleeping until it passes.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

/** The machine's time: the default wherever no clock is given. The one place Tessera reads it. */
export const systemClock: Clock = { now: () => Date.now() };

/** Whole epoch seconds, the unit of tokens (`iat`, `exp`) and of events. */
export const epochSeconds = (clock: Clock): number => Math.floor(clock.now() / 1000);

/** A clock that moves only when told to: for tests of expiry, windows and retention. */
export class ManualClock implements Clock {
  #nowMs: number;

  constructor(startMs: number = systemClock.now()) {
    this.#nowMs = startMs;
  }

  now(): number {
    return this.#nowMs;
  }

  advance(ms: number): void {
    if (!(ms >= 0)) throw new InvalidTimingArgument('a clock only moves forward');
    this.#nowMs += ms;
  }

  set(ms: number): void {
    if (ms < this.#nowMs) throw new InvalidTimingArgument('a clock only moves forward');
    this.#nowMs = ms;
  }
}
