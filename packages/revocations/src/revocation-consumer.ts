import { randomUUID } from 'node:crypto';
import type { SigningKeyEvent } from '@tessera/contracts';
import { consoleLogger, type Delivery, type FeedConsumer, type FeedEvent, type FeedLag, type FeedLogger, type RevocationFeed } from '@tessera/feed';
import { RevocationProjection, type CutCandidate } from '@tessera/verification';
import { createPositionDeduper } from './position-deduper.js';
import { systemClock, systemScheduler, type Scheduler } from '@tessera/timing';

export interface RevocationConsumerOptions {
  readonly feed: RevocationFeed;
  /** Default: a group of its own, since every instance needs every revocation. */
  readonly groupId?: string;
  /**
   * @deprecated Ignored. A consumer rebuilds from every event the topic retains and keeps those
   * whose own `rejectsUntil` has not passed (docs/decisions/0008): a window taken from a
   * configured lifetime missed revocations of tokens issued under a longer one.
   */
  readonly accessTokenTtlSeconds?: number;
  readonly clockSkewSeconds?: number;
  /** Verifiers elsewhere learn signing keys from the feed; called once per key event. */
  readonly onSigningKeyEvent?: (event: SigningKeyEvent, feedEvent: FeedEvent) => void;
  readonly logger?: FeedLogger;
  /** Epoch milliseconds. */
  readonly now?: () => number;
  /** How often entries that can no longer reject anything are dropped. */
  readonly forgetIntervalMs?: number;
  /** Where that sweep is scheduled; default the machine's timers (which keep no process alive). */
  readonly scheduler?: Scheduler;
}

export interface RevocationConsumerStats {
  readonly applied: number;
  readonly duplicatesIgnored: number;
  readonly failed: number;
  readonly entries: number;
}

export interface RevocationConsumer {
  /** Resolves once every retained revocation that can still reject a token is in the projection. */
  readonly ready: Promise<void>;
  isReady(): boolean;
  /** True when a token of this family and generation has been rotated away or revoked. */
  isRejected(familyId: string, generation: number): boolean;
  /** True when a cut of the token's account or client id (API Login ID, API ID) came after its `iat`. */
  isCutOff(token: CutCandidate): boolean;
  stats(): RevocationConsumerStats;
  /** How far behind the feed the projection is (asks the broker: call it when scraped). */
  lag(): Promise<FeedLag>;
  close(): Promise<void>;
}

/**
 * A downstream verifier's view of revocations, fed from the RevocationFeed. On start it reads
 * the feed from the oldest retained event, then follows it live. How far back a revocation
 * still matters is written on each event (`rejectsUntil`), not known in advance, so the
 * topic's retention is the window; events that can no longer reject anything are not stored.
 */
export async function startRevocationConsumer(options: RevocationConsumerOptions): Promise<RevocationConsumer> {
  const clockSkewSeconds = options.clockSkewSeconds ?? 60;
  const now = options.now ?? systemClock.now;
  const logger = options.logger ?? consoleLogger;
  const projection = new RevocationProjection({ clockSkewSeconds });
  // Set the projection's clock before the rebuild, so it skips what has expired.
  projection.forgetExpired(Math.floor(now() / 1000));
  const deduper = createPositionDeduper();
  let applied = 0;
  let duplicatesIgnored = 0;
  let failed = 0;
  let ready = false;

  const onEvent = (feedEvent: FeedEvent, delivery: Delivery) => {
    if (!deduper.firstDelivery(feedEvent, delivery)) {
      duplicatesIgnored += 1;
      return;
    }
    applied += 1;
    const event = feedEvent.event;
    switch (event.type) {
      case 'TokenRotated':
      case 'TokenRevoked':
      case 'AccountTokensRevoked':
      case 'CredentialTokensRevoked':
        projection.apply(event);
        return;
      case 'SigningKeyPublished':
      case 'SigningKeyRetired':
        options.onSigningKeyEvent?.(event, feedEvent);
        return;
      case 'TokenIssued':
        // Nothing to reject: a family's first generation is valid until something supersedes it.
        return;
      case 'AccountRegistered':
      case 'ApiCredentialIssued':
      case 'ApiCredentialRevoked':
      case 'LegacyCredentialIssued':
      case 'LegacyCredentialRevoked':
      case 'PermissionsChanged':
      case 'AccountAudiencesSet':
      case 'ClientKeysSet':
      case 'ClientDpopSet':
      case 'AccountDisabled':
      case 'AccountEnabled':
      case 'ControlRegionChanged':
        // Nothing for this projection: a token carries its scope, a revoked credential's
        // refreshes are refused by the issuer (cutting its tokens is a cut event of its own, as is
        // disabling an account's), and the control region matters to writers of accounts only.
        return;
      default:
        // Every published type is handled above, or this fails to compile. A type the feed does
        // not know never gets here: the feed skips it.
        event satisfies never;
    }
  };

  const consumer: FeedConsumer = await options.feed.consume({
    groupId: options.groupId ?? `tessera-revocations-${randomUUID()}`,
    // 0: every retained event, whatever a reused group consumed before (the projection lives in memory).
    since: 0,
    onEvent,
    onError: (error) => {
      failed += 1;
      logger.warn({ err: error, code: error.code }, 'revocation consumer: feed error');
    },
  });

  const stopForgetting = (options.scheduler ?? systemScheduler).every(options.forgetIntervalMs ?? 60_000, () => projection.forgetExpired(Math.floor(now() / 1000)));

  const readyPromise = consumer.ready.then(() => {
    ready = true;
  });

  return {
    ready: readyPromise,
    isReady: () => ready,
    isRejected: (familyId, generation) => projection.isRejected(familyId, generation),
    isCutOff: (token) => projection.isCutOff(token),
    stats: () => ({ applied, duplicatesIgnored, failed, entries: projection.size }),
    lag: () => consumer.lag(),
    close: async () => {
      stopForgetting();
      await consumer.close();
    },
  };
}
