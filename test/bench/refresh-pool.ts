/**
 * Single-use refresh tokens: each request pops a pre-issued one. Should the pool run dry, the
 * refresh tokens 200s returned are used next, the oldest first (each still exactly once);
 * `recycled` counts those so the report can say the pre-issued pool was or was not enough.
 *
 * Oldest first, as a client refreshes again once its token has aged, not the instant it got it.
 * Newest first, each Tessera refresh rotated a family that had rotated a few milliseconds before,
 * and cost about 10% more CPU than a fresh family's (596 against 536 µs, one process, in turn);
 * oldest first it cost the same (627 against 635).
 */
export class RefreshPool {
  private readonly fresh: string[];
  /** What 200s returned, in order; those before `returnedHead` were used. */
  private returned: string[] = [];
  private returnedHead = 0;
  recycled = 0;
  exhausted = 0;

  constructor(tokens: string[]) {
    this.fresh = tokens;
  }

  /** The returned tokens not used yet, oldest first. */
  private unusedReturned(): string[] {
    return this.returned.slice(this.returnedHead);
  }

  get remaining(): number {
    return this.fresh.length;
  }

  /** A new pool for a later run: what is left unused, then what 200s returned (each still used once). */
  carryOver(): RefreshPool {
    // The new pool pops from the end: what is left of the pre-issued first, then the oldest returned.
    return new RefreshPool([...this.unusedReturned().reverse(), ...this.fresh]);
  }

  next(): string {
    const token = this.fresh.pop();
    if (token !== undefined) return token;
    const again = this.returned[this.returnedHead];
    if (again !== undefined) {
      this.returnedHead += 1;
      // Drop the used ones now and then: a run returns one token per 200.
      if (this.returnedHead >= 65_536) {
        this.returned = this.unusedReturned();
        this.returnedHead = 0;
      }
      this.recycled += 1;
      return again;
    }
    // Nothing left: send a token that cannot exist, so the answer counts as a non-200.
    this.exhausted += 1;
    return 'tsr_exhausted';
  }

  keep(token: string): void {
    this.returned.push(token);
  }
}
