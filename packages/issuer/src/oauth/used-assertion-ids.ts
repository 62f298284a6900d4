/**
 * The `jti`s of the client assertions this process accepted, each kept until its assertion expires
 * (RFC 7523 section 3, point 7: a server may keep used jtis to refuse a replay). In memory and per
 * process (docs/decisions/0026): a replay on another replica within the assertion's lifetime is not
 * seen here. Bounded: when full, a new assertion is refused rather than an old jti forgotten, since
 * forgetting one would let its assertion be replayed.
 */
export class UsedAssertionIds {
  /** `clientId jti` → the epoch second after which it is forgotten. Map order is insertion order. */
  private readonly expiries = new Map<string, number>();

  constructor(private readonly capacity = 100_000) {}

  /** True the first time a client's jti is spent; false for a replay, or when the cache is full of live ids. */
  spend(clientId: string, jti: string, keepUntil: number, now: number): boolean {
    this.forgetExpired(now);
    const key = `${clientId} ${jti}`;
    if (this.expiries.has(key)) return false;
    if (this.expiries.size >= this.capacity) return false;
    this.expiries.set(key, keepUntil);
    return true;
  }

  get size(): number {
    return this.expiries.size;
  }

  /**
   * Drops the ids whose time has passed. Insertion order is not expiry order (lifetimes differ by
   * up to the bound), so the whole map is swept, but only once a second at most.
   */
  private lastSweep = -1;
  private forgetExpired(now: number): void {
    if (now === this.lastSweep) return;
    this.lastSweep = now;
    for (const [key, keepUntil] of this.expiries) if (keepUntil < now) this.expiries.delete(key);
  }
}
