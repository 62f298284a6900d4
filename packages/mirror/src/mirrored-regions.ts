import { kafkaSecurityOf } from '@tessera/config';
import { createKafkaFeed, privateGroupId, type Delivery, type FeedConsumer, type FeedEvent } from '@tessera/feed';
import { Retry, registerCounter, type Host } from '@tessera/host';
import { createPositionDeduper } from '@tessera/revocations';
import { registerMirrorLag } from './mirror-lag.js';
import { mirroredTopicsOf } from './mirrored-topics.js';
import { routeMirroredEvent, type MirrorTargets } from './route-mirrored-event.js';

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
      if (routeMirroredEvent(feedEvent, mirrored, targets)) applied += 1;
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
