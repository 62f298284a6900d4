/**
 * The machine's time, in epoch milliseconds: the default clock of this package, which has no
 * runtime dependency. Every option that takes a clock (`clock` on the clients, on FileTokenLock)
 * falls back to it, and nothing else here reads the time.
 */
export const systemTime = (): number => Date.now();
