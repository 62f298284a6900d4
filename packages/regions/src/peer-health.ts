import { systemScheduler, type Scheduler } from '@tessera/timing';

/**
 * The failure detector on the link to other regions' issuers (docs/multi-region.md, "Revocation
 * from anywhere"). A region is marked unreachable after `failures` consecutive failed exchanges
 * with it (forwarded requests and background probes alike), or at once when a forwarded request
 * waited its whole budget for nothing; it is marked reachable again by the first exchange that
 * succeeds. Probes run in the background every `probeIntervalSeconds` whatever the traffic, so a
 * dead link is known before a client's revoke has to find out, and a healed one soon after.
 *
 * While a region is marked unreachable, a revoke of its families is decided here from the check
 * material at once, and a refresh of them answers 503 at once, instead of waiting on a dead link.
 */
export interface PeerHealthOptions {
  /** Peer region → its issuer's origin. */
  readonly peers: Readonly<Record<string, string>>;
  /** TESSERA_PEER_FAILURES. */
  readonly failures: number;
  /** TESSERA_PEER_PROBE_INTERVAL: between probes, and each probe's budget. */
  readonly probeIntervalSeconds: number;
  /** One probe of a peer: resolves true when it answered as a healthy issuer does. The default asks for its JWKS. */
  readonly probe?: (origin: string, signal: AbortSignal) => Promise<boolean>;
  readonly onChange?: (region: string, reachable: boolean, cause: string) => void;
  /** Where the background probes wait; the host's, so a test moves time instead of sleeping. */
  readonly scheduler?: Scheduler;
}

interface PeerState {
  consecutiveFailures: number;
  reachable: boolean;
  probing: boolean;
}

/** A probe: the peer's JWKS, which every ready issuer serves from memory; anything but a 200 is a failure. */
async function probeJwks(origin: string, signal: AbortSignal): Promise<boolean> {
  const answer = await fetch(new URL('/.well-known/jwks.json', origin), { signal, redirect: 'error' });
  await answer.arrayBuffer();
  return answer.status === 200;
}

export class PeerHealth {
  readonly #peers = new Map<string, PeerState>();
  readonly #options: PeerHealthOptions;
  #cancel: (() => void) | undefined;

  constructor(options: PeerHealthOptions) {
    this.#options = options;
    // Reachable until shown otherwise: a region that has just started forwards as it always did.
    for (const region of Object.keys(options.peers)) this.#peers.set(region, { consecutiveFailures: 0, reachable: true, probing: false });
  }

  isReachable(region: string): boolean {
    return this.#peers.get(region)?.reachable ?? true;
  }

  /** Every peer: 1 reachable, 0 marked unreachable (tessera_peer_reachable). */
  snapshot(): Record<string, number> {
    return Object.fromEntries([...this.#peers].map(([region, state]) => [region, state.reachable ? 1 : 0]));
  }

  succeeded(region: string): void {
    const state = this.#peers.get(region);
    if (!state) return;
    state.consecutiveFailures = 0;
    if (!state.reachable) {
      state.reachable = true;
      this.#options.onChange?.(region, true, 'an exchange succeeded');
    }
  }

  /** `wholeBudget`: the exchange waited its whole budget for nothing, which marks the region at once. */
  failed(region: string, cause: string, options: { readonly wholeBudget?: boolean } = {}): void {
    const state = this.#peers.get(region);
    if (!state) return;
    state.consecutiveFailures += 1;
    if (state.reachable && (options.wholeBudget || state.consecutiveFailures >= this.#options.failures)) {
      state.reachable = false;
      this.#options.onChange?.(region, false, cause);
    }
  }

  /** Probes every peer once (a peer still being probed is skipped). */
  async probeAll(): Promise<void> {
    const probe = this.#options.probe ?? probeJwks;
    await Promise.all(
      [...this.#peers].map(async ([region, state]) => {
        if (state.probing) return;
        state.probing = true;
        try {
          const healthy = await probe(this.#options.peers[region]!, AbortSignal.timeout(this.#options.probeIntervalSeconds * 1000));
          if (healthy) this.succeeded(region);
          else this.failed(region, 'the probe was not answered 200');
        } catch (error) {
          this.failed(region, `the probe failed: ${error instanceof Error ? error.name : String(error)}`);
        } finally {
          state.probing = false;
        }
      }),
    );
  }

  /** Probes in the background until the returned function is called: the next probe waits for the last to end. */
  start(): () => void {
    const scheduler = this.#options.scheduler ?? systemScheduler;
    const every = this.#options.probeIntervalSeconds * 1000;
    let running = true;
    const tick = () => {
      void this.probeAll().finally(() => {
        if (running) this.#cancel = scheduler.after(every, tick);
      });
    };
    this.#cancel = scheduler.after(every, tick);
    return () => {
      running = false;
      this.#cancel?.();
      this.#cancel = undefined;
    };
  }
}
