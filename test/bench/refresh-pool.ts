/**
 * Single-use refresh tokens: each request pops a pre-issued one. Should the pool run dry, the
 * refresh token a 200 just returned is used next (each still exactly once); `recycled` counts
 * those so the report can say the pre-issued pool was or was not enough.
 */
export class RefreshPool {
  private readonly fresh: string[];
  private readonly returned: string[] = [];
  recycled = 0;
  exhausted = 0;

  constructor(tokens: string[]) {
    this.fresh = tokens;
  }

  get remaining(): number {
    return this.fresh.length;
  }

  /** A new pool for a later run: what is left unused, then what 200s returned (each still used once). */
  carryOver(): RefreshPool {
    return new RefreshPool([...this.returned, ...this.fresh]);
  }

  next(): string {
    const token = this.fresh.pop();
    if (token !== undefined) return token;
    const again = this.returned.pop();
    if (again !== undefined) {
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
