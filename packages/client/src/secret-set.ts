/**
 * The secrets a client has handled, most recent last, for redacting its error messages.
 * Bounded: old tokens drop out once they can no longer be in flight.
 */
export class SecretSet {
  readonly #permanent: readonly string[];
  readonly #recent = new Set<string>();

  constructor(permanent: readonly string[]) {
    this.#permanent = permanent;
  }

  add(...secrets: string[]): void {
    for (const secret of secrets) {
      this.#recent.delete(secret);
      this.#recent.add(secret);
    }
    while (this.#recent.size > 16) {
      const oldest = this.#recent.values().next().value;
      if (oldest === undefined) break;
      this.#recent.delete(oldest);
    }
  }

  values(): string[] {
    return [...this.#permanent, ...this.#recent];
  }
}
