import { streams, type EventMetadata, type FamilyEvent, type TokenRevoked } from '@tessera/events';
import { DomainError, familyDecider, type FamilyCommand } from '@tessera/domain';
import { handleCommand, type GuardedEventStore } from '@tessera/event-store';
import { untilAvailable, type Host } from '@tessera/host';
import { familyHomedIn } from './home-region.js';

export interface RevokedElsewhereOptions {
  /** TESSERA_REGION, and where bare family ids are homed (TESSERA_BARE_FAMILY_REGION, else the region itself). */
  readonly own: string;
  readonly bareFamilies?: string | undefined;
  /** Seconds an entry is kept: the longest a refresh token of the family can still be presented (TESSERA_REFRESH_TOKEN_TTL plus skew). */
  readonly keepSeconds: number;
  /** Epoch seconds. */
  readonly now: () => number;
}

/**
 * Revocations of this region's own families that another region recorded while this one was out
 * of its reach (docs/decisions/0018), folded into this region's refresh decisions: a refresh of
 * such a family is refused from the moment the revocation arrives here, and the family's own
 * stream records it soon after (see `recordRevokedElsewhere`), so that its revocation is in this
 * region's log, on its revocation topic for its downstream consumers, and in every refresh
 * decision after a restart, whatever the topics still retain.
 */
export class RevokedElsewhere {
  readonly #families = new Map<string, number>();
  #applied = 0;

  constructor(private readonly options: RevokedElsewhereOptions) {}

  /** True when the event is news: a family homed here, not seen revoked elsewhere before. */
  apply(event: TokenRevoked): boolean {
    if (!familyHomedIn(event.familyId, this.options.own, this.options.bareFamilies)) return false;
    const known = this.#families.has(event.familyId);
    this.#families.set(event.familyId, Math.max(this.#families.get(event.familyId) ?? 0, this.options.now() + this.options.keepSeconds));
    if (!known) this.#applied += 1;
    return !known;
  }

  has(familyId: string): boolean {
    return this.#families.has(familyId);
  }

  /** Revocations of this region's families recorded elsewhere and folded in since start. */
  get applied(): number {
    return this.#applied;
  }

  forgetExpired(nowSeconds: number): void {
    for (const [familyId, forgetAt] of this.#families) if (forgetAt <= nowSeconds) this.#families.delete(familyId);
  }
}

/**
 * Records in the family's own stream a revocation another region made of it (an operator-style
 * RevokeFamily: nothing when the family is revoked already, so every issuer of this region may do
 * it and each restart may do it again). The metadata names the region it was recorded in.
 * Waits for `writable` (the secret-hashing key checked, the read models caught up) and for the store.
 */
export function recordRevokedElsewhere(
  host: Pick<Host, 'log'>,
  store: GuardedEventStore,
  options: { readonly now: () => number; readonly writable: Promise<unknown>; readonly onFamilyEvent?: ((event: FamilyEvent) => void) | undefined },
) {
  return (event: TokenRevoked, recordedIn: string): void => {
    const metadata: EventMetadata = { accountId: event.accountId, actor: `region:${recordedIn}` };
    const record = async () => {
      await options.writable;
      const { events } = await untilAvailable(store, () =>
        handleCommand(store, {
          stream: streams.family(event.familyId),
          decider: familyDecider,
          command: (state): FamilyCommand => {
            if (state.status === 'none') throw new DomainError('ERR_FAMILY_NOT_FOUND', `no token family ${event.familyId}`);
            return { type: 'RevokeFamily', now: options.now() };
          },
          read: 'last-event',
          metadata,
          // A refresh that commits meanwhile: revoke its newer generation instead.
          onConflict: { retries: 3 },
        }),
      );
      for (const appended of events) options.onFamilyEvent?.(appended);
      if (events.length > 0) host.log.info({ familyId: event.familyId, recordedIn }, 'recorded a revocation another region made of a family homed here');
    };
    record().catch((error: unknown) => host.log.warn({ err: error, familyId: event.familyId, recordedIn }, 'could not record a revocation another region made of a family homed here; refreshes of it are refused all the same'));
  };
}
