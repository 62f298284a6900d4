import { systemClock } from '@tessera/timing';

/**
 * A token signed by a key this verifier has not heard of yet — `tessera keys rotate` just ran,
 * and the key event is still on its way through the log or Kafka — is worth one look at the
 * source of keys before answering 401. Anyone can put any `kid` in a token, so the look is
 * single-flight and at most one per cooldown: a flood of forged kids costs one load per cooldown.
 */
export function createKeyRefresh(load: () => Promise<void>, options: { cooldownMs: number; now?: () => number }): () => Promise<void> {
  const now = options.now ?? systemClock.now;
  let inFlight: Promise<void> | undefined;
  let lastStarted = Number.NEGATIVE_INFINITY;
  return () => {
    if (inFlight) return inFlight;
    if (now() - lastStarted < options.cooldownMs) return Promise.resolve();
    lastStarted = now();
    inFlight = load()
      // A failed load leaves the keys as they were: the caller answers from what it knows.
      .catch(() => undefined)
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };
}
