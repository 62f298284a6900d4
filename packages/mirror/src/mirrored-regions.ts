import {
  accountEventTypes,
  familyCheckEventTypes,
  isEventOf,
  signingKeyEventTypes,
  tokenCutEventTypes,
  type AccountEvent,
  type ControlRegionChanged,
  type FamilyEvent,
  type SigningKeyEvent,
  type TokenCutEvent,
  type TokenRevoked,
  type TokenRotated,
} from '@tessera/contracts';
import { kafkaSecurityOf, mirroredRegionsOf, type TesseraConfig } from '@tessera/config';
import { createKafkaFeed, privateGroupId, type Delivery, type FeedConsumer, type FeedEvent, type FeedLag } from '@tessera/feed';
import { Retry, registerCounter, registerLabelledGauge, type Host } from '@tessera/host';
import { createPositionDeduper } from '@tessera/revocations';

/**
 * The read models another region's events land in. Each is optional: an issuer has no
 * revocation projection, a Kafka-fed verifier no use for credentials.
 */
export interface MirrorTargets {
  /** Other regions' public keys: their tokens verify here with no call to them. */
  readonly keys?: { apply(event: SigningKeyEvent): void };
  /** Credentials, permissions and cuts made in other regions (the control region's accounts). */
  readonly accounts?: { apply(event: AccountEvent): void };
  /** Rotations, revocations and cuts of other regions' families and accounts. */
  readonly projection?: { apply(event: TokenRotated | TokenRevoked | TokenCutEvent): void };
  /**
   * Other regions' family events (`<region>.tessera.families`): the check material a revoke of
   * their families is decided from here while their region is out of reach. Followed only by a
   * process that revokes (an issuer, the all-in-one), and not a condition of readiness: material
   * not read yet only makes such a revoke answer 503, as it did before the material existed.
   */
  readonly families?: { apply(event: FamilyEvent): void };
  /**
   * A revocation another region recorded where it arrived (a `revocations-<familyId>` stream there),
   * handed over before the projection applies it: the home region folds it into its refresh decisions.
   */
  readonly remoteRevocations?: { apply(event: TokenRevoked, recordedIn: string): void };
  /**
   * Other regions' revocations and cuts, from their revocation topics, with where each was recorded:
   * the Shared Signals transmitter records them for this region's receivers.
   */
  readonly signals?: { receive(event: TokenRevoked | TokenCutEvent, source: { readonly region: string; readonly eventId: string; readonly recordedAt: number }): void };
  /** The control region's changes recorded in other regions, and when each account topic has been read up to where it stood. */
  readonly control?: { apply(event: ControlRegionChanged): void; caughtUp(source: string): void };
}

export interface MirroredTopic {
  readonly region: string;
  /** `<region>.<topic>`: MirrorMaker 2's default replication policy, with the region as the cluster alias. */
  readonly topic: string;
  /** What the topic carries: the revocation feed (keys, rotations, revocations, cuts), account events, or family events. */
  readonly carries: 'revocations' | 'accounts' | 'families';
}

/**
 * The mirrored topics this process follows, from TESSERA_MIRRORED_REGIONS (default: the peer
 * regions); the family topics only with `families` (a process that revokes).
 */
export function mirroredTopicsOf(config: TesseraConfig, options: { readonly families?: boolean } = {}): MirroredTopic[] {
  return mirroredRegionsOf(config).flatMap((region) => [
    { region, topic: `${region}.${config.TESSERA_KAFKA_TOPIC}`, carries: 'revocations' as const },
    { region, topic: `${region}.${config.TESSERA_KAFKA_ACCOUNT_TOPIC}`, carries: 'accounts' as const },
    ...(options.families ? [{ region, topic: `${region}.${config.TESSERA_KAFKA_FAMILY_TOPIC}`, carries: 'families' as const }] : []),
  ]);
}

/** The stream a region records a revocation of another region's family in: `revocations-<familyId>`. */
const remoteRevocationStream = /^revocations-/;

/** What the revocation topic carries into the projection: rotations, revocations and cuts. */
const projectionTypes = ['TokenRotated', 'TokenRevoked', ...tokenCutEventTypes] as const;

/**
 * Routes one mirrored event to the read models. Each topic feeds what it is the source of, so an
 * event that travels on both (a cut, a permission change) is applied to each model once: cuts
 * reach the projection from the revocation topic and the accounts from the account topic.
 * Every apply is idempotent and order-insensitive across families (highest generation wins,
 * revoked is terminal), so redeliveries by the relay or MirrorMaker 2 change nothing.
 */
function routeEvent(feedEvent: FeedEvent, mirrored: MirroredTopic, targets: MirrorTargets): boolean {
  const { event } = feedEvent;
  if (mirrored.carries === 'accounts') {
    if (event.type === 'ControlRegionChanged') {
      targets.control?.apply(event);
      return targets.control !== undefined;
    }
    if (!isEventOf(accountEventTypes, event) || !targets.accounts) return false;
    targets.accounts.apply(event);
    return true;
  }
  if (mirrored.carries === 'families') {
    if (!isEventOf(familyCheckEventTypes, event) || !targets.families) return false;
    targets.families.apply(event);
    return true;
  }
  if (isEventOf(signingKeyEventTypes, event)) {
    targets.keys?.apply(event);
    return targets.keys !== undefined;
  }
  if (isEventOf(projectionTypes, event)) {
    // First the refresh decisions, then the verifier: once a token is refused here, so is a refresh of its family.
    if (event.type === 'TokenRevoked' && remoteRevocationStream.test(feedEvent.stream)) targets.remoteRevocations?.apply(event, mirrored.region);
    targets.projection?.apply(event);
    if (event.type !== 'TokenRotated') targets.signals?.receive(event, { region: mirrored.region, eventId: feedEvent.eventId, recordedAt: feedEvent.recordedAt });
    return targets.projection !== undefined || targets.remoteRevocations !== undefined || targets.signals !== undefined;
  }
  return false;
}

/**
 * Follows the topics MirrorMaker 2 copies into this region's Kafka from the other regions, into
 * this process's read models (docs/multi-region.md, "How Kafka topics are mirrored"). Each topic
 * is read from the oldest retained event (a projection lives in memory), deduplicated by log
 * position per partition, as the revocation consumer does, since positions of one region's log
 * only compare with each other.
 *
 * The process is not ready until every mirrored topic exists and has been read up to where it
 * stood at start: a verifier that knew another region's keys before its revocations would accept
 * a revoked token. A topic that is missing (MirrorMaker 2 not running yet) is waited for, with the
 * cause on /readyz; the local broker is all this needs, so a partition between regions does not
 * hold a restarted process back.
 */
export function wireMirroredRegions(host: Host, targets: MirrorTargets): void {
  const { config, log } = host;
  const topics = mirroredTopicsOf(config, { families: targets.families !== undefined });
  if (topics.length === 0 || config.TESSERA_KAFKA_BROKERS === undefined) return;
  const brokers = config.TESSERA_KAFKA_BROKERS;
  const security = kafkaSecurityOf(config);
  let applied = 0;
  let duplicates = 0;
  const closing = new AbortController();
  const consumers: FeedConsumer[] = [];
  /** Each mirrored topic's consumer once it runs, by region, for the lag gauges. */
  const followedTopics: { readonly region: string; consumer: FeedConsumer | undefined }[] = [];
  const feeds: ReturnType<typeof createKafkaFeed>[] = [];

  for (const mirrored of topics) {
    let state: 'missing' | 'catching up' | 'ready' = 'missing';
    // Family topics are not waited for (see MirrorTargets.families); the others are.
    if (mirrored.carries !== 'families') host.readiness.add(`mirror ${mirrored.topic}`, () =>
      state === 'ready'
        ? undefined
        : state === 'missing'
          ? `mirrored topic ${mirrored.topic} does not exist yet in this region's Kafka (MirrorMaker 2 creates it)`
          : `mirrored topic ${mirrored.topic} is catching up`,
    );
    const feed = createKafkaFeed({ brokers, topic: mirrored.topic, logger: log, clientId: `tessera-mirror-${mirrored.region}`, ...security });
    const followed: (typeof followedTopics)[number] = { region: mirrored.region, consumer: undefined };
    followedTopics.push(followed);
    feeds.push(feed);
    const deduper = createPositionDeduper();
    const onEvent = (feedEvent: FeedEvent, delivery: Delivery) => {
      if (!deduper.firstDelivery(feedEvent, delivery)) {
        duplicates += 1;
        return;
      }
      if (routeEvent(feedEvent, mirrored, targets)) applied += 1;
    };
    // Once at first, then every half minute: a region without its mirror yet is a setup step, not an emergency.
    const following = new Retry({
      backoff: { initialMs: 2_000, maxMs: 2_000 },
      clock: host.clock,
      log: { logger: log, failing: 'mirrored topic not available yet; retrying', every: 15, fields: () => ({ topic: mirrored.topic }) },
    });
    const follow = async (): Promise<void> => {
      const outcome = await following.run(
        async () => {
          const consumer = await feed.consume({
            groupId: privateGroupId(`tessera-mirror-${mirrored.region}`),
            since: 0,
            onEvent,
            onError: (error) => log.warn({ err: error, topic: mirrored.topic }, 'mirrored topic: feed error'),
          });
          consumers.push(consumer);
          followed.consumer = consumer;
          state = 'catching up';
          await consumer.ready;
        },
        { signal: closing.signal },
      );
      if (!outcome.done) return;
      state = 'ready';
      if (mirrored.carries === 'accounts') targets.control?.caughtUp(mirrored.topic);
      log.info({ topic: mirrored.topic, region: mirrored.region }, 'following mirrored topic');
    };
    // Not awaited: the start goes on, and /readyz says what is still missing.
    follow().catch((error: unknown) => host.fatal(error, `following mirrored topic ${mirrored.topic} failed`));
  }

  registerMirrorLag(host, followedTopics);
  registerCounter(host.metrics, 'tessera_mirrored_events_applied_total', 'Events from other regions\' mirrored topics applied to this process\'s read models', () => applied);
  registerCounter(host.metrics, 'tessera_mirrored_events_duplicate_total', 'Redelivered mirrored events dropped by log position', () => duplicates);
  host.onClose(async () => {
    closing.abort();
    await Promise.all(consumers.map((consumer) => consumer.close().catch(() => undefined)));
    await Promise.all(feeds.map((feed) => feed.close().catch(() => undefined)));
  });
}

/**
 * Per mirrored region, over its topics: the events waiting in this region's Kafka, and while any
 * waits, how long ago the newest event applied from that region was recorded there (its log's
 * time), so the delay through MirrorMaker 2 and this follower. Read from the broker when scraped;
 * a topic not followed yet counts as nothing waiting (/readyz says it is missing).
 */
function registerMirrorLag(host: Host, following: readonly { readonly region: string; readonly consumer: FeedConsumer | undefined }[]): void {
  const regions = [...new Set(following.map(({ region }) => region))];
  const lagByRegion = async () =>
    Promise.all(
      regions.map(async (region) => {
        const lags = await Promise.all(following.filter((followed) => followed.region === region && followed.consumer).map(({ consumer }) => consumer!.lag()));
        return [region, combined(lags)] as const;
      }),
    );
  registerLabelledGauge(host.metrics, 'tessera_mirror_pending_events', "Events in this region's Kafka from a mirrored region's topics not applied here yet", ['region'], async () =>
    (await lagByRegion()).map(([region, lag]) => [{ region }, lag.pendingEvents] as const),
  );
  registerLabelledGauge(
    host.metrics,
    'tessera_mirror_lag_seconds',
    "While a mirrored region's events wait here: seconds since the newest event applied from that region was recorded in its log (0 when none waits)",
    ['region'],
    async () => (await lagByRegion()).map(([region, lag]) => [{ region }, lag.behindSince === undefined ? 0 : Math.max(0, host.clock.now() - lag.behindSince) / 1000] as const),
  );
}

/** A region's topics together: what waits on all of them, behind since the earliest. */
function combined(lags: readonly FeedLag[]): FeedLag {
  const behind = lags.flatMap(({ behindSince }) => (behindSince === undefined ? [] : [behindSince]));
  return { pendingEvents: lags.reduce((sum, { pendingEvents }) => sum + pendingEvents, 0), behindSince: behind.length === 0 ? undefined : Math.min(...behind) };
}
