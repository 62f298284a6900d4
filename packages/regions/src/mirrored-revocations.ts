import { streams, type RevocationMirrored, type TokenCutEvent, type TokenRevoked } from '@tessera/events';
import { logReader, type EventStore, type LogReader } from '@tessera/event-store';
import { familyHomedIn } from './home-region.js';

/** Where a mirrored revocation came from: the region whose log recorded it, and its id and time there. */
export interface MirroredRevocationSource {
  readonly region: string;
  readonly eventId: string;
  /** Epoch milliseconds. */
  readonly recordedAt: number;
}

export interface MirroredRevocationsOptions {
  readonly store: Pick<EventStore, 'append'>;
  /** This process's region, and where bare family ids are homed: a family homed here reaches the log through its own stream. */
  readonly own: string;
  readonly bareFamilies?: string | undefined;
  /** TESSERA_CLOCK_SKEW: how long past its last rejection a revocation is still remembered as sent. */
  readonly clockSkewSeconds: number;
  /** TESSERA_REFRESH_TOKEN_TTL: how long one of an older writer's revocations, which names no last rejection, is remembered. */
  readonly refreshTokenTtlSeconds: number;
  /** Epoch seconds. */
  readonly now: () => number;
  /** True once a Shared Signals stream exists: with none, nothing is recorded (no receiver would get it). */
  readonly anyStream: () => boolean;
  /** Resolves once this process's read models (this one among them) have caught up with the log. */
  readonly caughtUp: Promise<unknown>;
  /** Retries an append while the store is unavailable. */
  readonly untilAvailable: <T>(operation: () => Promise<T>) => Promise<T>;
  readonly onRecordFailed: (error: unknown, source: MirroredRevocationSource) => void;
}

/**
 * Revocations other regions made, recorded in this region's log (`mirroredrevocations-<region>`)
 * so that this region's Shared Signals receivers get them like local ones: from the log, with the
 * transmitter's durable delivery and checkpoints (docs/shared-signals.md, "Several regions").
 *
 * Each is recorded once, whatever the redeliveries: a family's revocation once per family (revoked
 * is terminal, and a family revoked away from its home reaches here twice: as the region that
 * revoked it recorded it, and as its home recorded it after), a cut once per source event. What was
 * recorded is known from the log itself (the `reader`), so a restart, which reads the mirrored
 * topics again from their start, records nothing twice. A revocation of a family homed here is not
 * recorded: its home stream records it (recordRevokedElsewhere), and the transmitter sends that.
 * Entries are forgotten once their revocation rejects nothing more, plus skew: a redelivery after
 * that would be recorded again, and say nothing a receiver could act on.
 */
export class MirroredRevocations {
  /** `family:<id>` or `event:<region>:<id>` → epoch seconds after which it is forgotten. */
  private readonly recorded = new Map<string, number>();
  private sweptAtSize = 1024;
  private recordedCount = 0;

  constructor(private readonly options: MirroredRevocationsOptions) {}

  /** Follows this region's revocations of other regions' families and what it recorded before. */
  get reader(): LogReader {
    return logReader(['TokenRevoked', 'RevocationMirrored'], (recorded) => {
      const { event } = recorded;
      if (event.type === 'RevocationMirrored') this.remember(event.revocation, { region: event.region, eventId: event.sourceEventId, recordedAt: event.sourceRecordedAt });
      else if (!this.homedHere(event.familyId)) this.remember(event, undefined);
    });
  }

  /** Another region's revocation or cut, as the mirror delivered it: recorded here unless it was already. */
  receive(revocation: TokenRevoked | TokenCutEvent, source: MirroredRevocationSource): void {
    if (revocation.type === 'TokenRevoked' && this.homedHere(revocation.familyId)) return;
    void this.options.caughtUp.then(
      async () => {
        // Checked once caught up: the log says what was recorded before this start.
        if (!this.options.anyStream() || this.recorded.has(keyOf(revocation, source))) return;
        this.remember(revocation, source);
        const event: RevocationMirrored = {
          type: 'RevocationMirrored',
          v: 1,
          region: source.region,
          sourceEventId: source.eventId,
          sourceRecordedAt: source.recordedAt,
          revocation,
        };
        // Any revision: one stream per region, appended to from the mirror's order, never decided from.
        await this.options.untilAvailable(() =>
          this.options.store.append(streams.mirroredRevocations(source.region), [{ event, metadata: { accountId: revocation.accountId, actor: `region:${source.region}` } }], { expectedRevision: 'any' }),
        );
        this.recordedCount += 1;
      },
      () => undefined,
    ).catch((error: unknown) => this.options.onRecordFailed(error, source));
  }

  /** Revocations recorded here since start, for tessera_ssf_mirrored_revocations_total. */
  get recordedSinceStart(): number {
    return this.recordedCount;
  }

  private homedHere(familyId: string): boolean {
    return familyHomedIn(familyId, this.options.own, this.options.bareFamilies);
  }

  private remember(revocation: TokenRevoked | TokenCutEvent, source: MirroredRevocationSource | undefined): void {
    const forgetAt = (revocation.rejectsUntil ?? this.options.now() + this.options.refreshTokenTtlSeconds) + this.options.clockSkewSeconds;
    this.recorded.set(keyOf(revocation, source), forgetAt);
    if (this.recorded.size >= this.sweptAtSize * 2) this.sweep();
  }

  private sweep(): void {
    const now = this.options.now();
    for (const [key, forgetAt] of this.recorded) if (forgetAt < now) this.recorded.delete(key);
    this.sweptAtSize = Math.max(1024, this.recorded.size);
  }
}

function keyOf(revocation: TokenRevoked | TokenCutEvent, source: MirroredRevocationSource | undefined): string {
  return revocation.type === 'TokenRevoked' ? `family:${revocation.familyId}` : `event:${source?.region ?? ''}:${source?.eventId ?? ''}`;
}
