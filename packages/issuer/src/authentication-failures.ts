import { streams, type AuthenticationFailuresCounted } from '@tessera/events';
import type { EventStore } from '@tessera/event-store';
import { systemScheduler, type Scheduler } from '@tessera/timing';

/** One refused get-oauth-token or /v1/authenticate attempt, as the issuer saw it. */
export interface AuthenticationFailure {
  readonly interface: 'v5' | 'v1';
  /** Set only when the attempt named a known credential. */
  readonly known?: { readonly accountId: string; readonly credentialId: string; readonly clientId: string };
}

export interface AuthenticationFailureCounter {
  record(failure: AuthenticationFailure): void;
  /** Appends the counts of every minute that has ended (all of them with `everything`). */
  flush(options?: { everything?: boolean }): Promise<void>;
  /** Flushes every `intervalMs` (default 10 s) on `scheduler` (default the machine's timers) until stopped; stopping flushes what is left. */
  start(options?: { readonly intervalMs?: number; readonly scheduler?: Scheduler }): () => Promise<void>;
}

/**
 * Counts failed authentications per credential per minute in memory and appends one
 * AuthenticationFailuresCounted event per (credential, minute): the audit trail shows an attack
 * without an attacker being able to fill the disk. Attempts that named no known credential
 * share one count per minute: the id they presented is never kept (it may be a secret typed into
 * the wrong field), and there is no bound on how many distinct ones an attacker can invent.
 */
export function createAuthenticationFailureCounter(deps: { store: Pick<EventStore, 'append'>; now: () => number }): AuthenticationFailureCounter {
  const buckets = new Map<string, AuthenticationFailuresCounted>();
  let flushing: Promise<void> | undefined;

  async function flushNow(everything: boolean): Promise<void> {
    const currentMinute = Math.floor(deps.now() / 60) * 60;
    // A snapshot: a failed append puts its bucket back, which must wait for the next flush.
    for (const [key, counted] of [...buckets]) {
      if (!everything && counted.minute >= currentMinute) continue;
      buckets.delete(key);
      try {
        await deps.store.append(streams.authenticationFailures(counted.accountId), [{ event: counted, metadata: { actor: 'issuer' } }], {
          expectedRevision: 'any',
        });
      } catch {
        // The store is down: keep the count and add to it, so nothing is lost; the next flush tries again.
        const since = buckets.get(key);
        buckets.set(key, since ? { ...since, count: since.count + counted.count } : counted);
      }
    }
  }

  const counter: AuthenticationFailureCounter = {
    record(failure) {
      const minute = Math.floor(deps.now() / 60) * 60;
      const key = `${minute}|${failure.interface}|${failure.known?.credentialId ?? ''}`;
      const counted = buckets.get(key);
      if (counted) {
        buckets.set(key, { ...counted, count: counted.count + 1 });
        return;
      }
      buckets.set(key, {
        type: 'AuthenticationFailuresCounted',
        v: 1,
        interface: failure.interface,
        ...(failure.known ? { accountId: failure.known.accountId, credentialId: failure.known.credentialId, clientId: failure.known.clientId } : {}),
        minute,
        count: 1,
      });
    },
    async flush(options = {}) {
      // One flush at a time: a slow append must not let a second flush append the same bucket.
      while (flushing) await flushing;
      flushing = flushNow(options.everything ?? false).finally(() => {
        flushing = undefined;
      });
      await flushing;
    },
    start({ intervalMs = 10_000, scheduler = systemScheduler } = {}) {
      const stop = scheduler.every(intervalMs, () => void counter.flush());
      return async () => {
        stop();
        await counter.flush({ everything: true });
      };
    },
  };
  return counter;
}
