import type { ControlRegionChanged } from '@tessera/contracts';
import { DomainError } from './errors.js';

/** Which region writes accounts, and since which epoch (docs/decisions/0018). */
export interface ControlRegion {
  readonly region: string;
  /** 0 before any change: TESSERA_CONTROL_REGION, the same in every region. */
  readonly epoch: number;
}

export const initialControlRegion = (configured: string): ControlRegion => ({ region: configured, epoch: 0 });

/**
 * The higher epoch wins. Two promotions that chose the same epoch at once (run in two regions
 * before either saw the other's) are settled the same way everywhere: the region whose name sorts
 * first. Every region that has seen both agrees, whatever order they arrived in.
 */
export function evolveControlRegion(state: ControlRegion, event: ControlRegionChanged): ControlRegion {
  if (event.epoch > state.epoch) return { region: event.region, epoch: event.epoch };
  if (event.epoch === state.epoch && event.region < state.region) return { region: event.region, epoch: event.epoch };
  return state;
}

/** The change `tessera regions promote-control` appends: one epoch above any seen. */
export function promoteControlRegion(state: ControlRegion, input: { readonly region: string; readonly recordedIn: string; readonly now: number }): ControlRegionChanged {
  return { type: 'ControlRegionChanged', v: 1, region: input.region, epoch: state.epoch + 1, recordedIn: input.recordedIn, at: input.now };
}

/**
 * The fence every writer of accounts checks before it appends: this region may write accounts
 * only while the highest epoch it has seen names it, and only once it has read every source of
 * those epochs (its own log, and each other region's mirrored account topic) up to where it stood.
 * A region that sees a newer epoch naming another region refuses from then on.
 */
export class ControlRegionFence {
  #state: ControlRegion;
  readonly #waitingFor = new Set<string>();

  /** `sources`: what must be read before a write is allowed (e.g. the mirrored account topics). */
  constructor(
    private readonly own: string,
    configured: string,
    sources: readonly string[] = [],
  ) {
    this.#state = initialControlRegion(configured);
    for (const source of sources) this.#waitingFor.add(source);
  }

  apply(event: ControlRegionChanged): void {
    this.#state = evolveControlRegion(this.#state, event);
  }

  /** A source has been read up to where it stood when this process started. */
  caughtUp(source: string): void {
    this.#waitingFor.delete(source);
  }

  get current(): ControlRegion {
    return this.#state;
  }

  /** What is still to be read before an account write is allowed; empty once confirmed. */
  get waitingFor(): readonly string[] {
    return [...this.#waitingFor];
  }

  /** Throws unless this region may append an account event now. */
  checkAccountWrite(): void {
    if (this.#waitingFor.size > 0) {
      throw new DomainError(
        'ERR_CONTROL_REGION_UNCONFIRMED',
        `account writes wait until this region has read what the other regions said about the control region (${this.waitingFor.join(', ')})`,
      );
    }
    if (this.#state.region !== this.own) {
      throw new DomainError(
        'ERR_NOT_CONTROL_REGION',
        `account writes are made in the control region, ${this.#state.region} (epoch ${this.#state.epoch}); this is region ${this.own}`,
      );
    }
  }
}
