import { kafkaSecurityOf, type TesseraConfig } from '@tessera/config';
import { streams, type RecordedEvent } from '@tessera/events';
import { ControlRegionFence, DomainError } from '@tessera/domain';
import { createKafkaFeed, privateGroupId, silentLogger, type FeedConsumer } from '@tessera/feed';
import { mirroredTopicsOf } from './mirrored-topics.js';

/** The fence's name for this region's own log, the first of the sources it must have read. */
export const localLogSource = 'this region\'s log';

/** The regions a control-region fence is drawn from, as the region settings give them. */
export interface ControlRegionSettings {
  /** This process's region. */
  readonly own: string | undefined;
  /** The control region, the same in every region. */
  readonly control: string | undefined;
}

/**
 * The fence every account writer of this region checks (docs/decisions/0018), or undefined without
 * a control region (no fence: one region, or regions that predate it). Before a first write
 * it must have read this region's own record of promotions and each other region's mirrored account
 * topic up to where it stood.
 */
export function controlRegionFenceOf(config: TesseraConfig, regions: ControlRegionSettings | undefined): ControlRegionFence | undefined {
  if (regions?.control === undefined || regions.own === undefined) return undefined;
  const topics = mirroredTopicsOf(config).filter((mirrored) => mirrored.carries === 'accounts').map((mirrored) => mirrored.topic);
  return new ControlRegionFence(regions.own, regions.control, [localLogSource, ...topics]);
}

/** What a command-line writer reads its own region's promotions from. */
export interface ControlRegionLog {
  readStream(stream: string): Promise<readonly RecordedEvent[]>;
}

/**
 * For a writer that does not run (the CLI): reads this region's record of promotions from the log
 * and every mirrored account topic up to its end into the fence, so the command checks what a
 * server that just started would. A topic that cannot be read in time leaves the fence waiting for
 * it: the write is refused, never made on a guess.
 */
export async function readControlRegion(config: TesseraConfig, fence: ControlRegionFence, log: ControlRegionLog, options: { readonly timeoutMs?: number } = {}): Promise<void> {
  for (const { event } of await log.readStream(streams.controlRegion())) {
    if (event.type === 'ControlRegionChanged') fence.apply(event);
  }
  fence.caughtUp(localLogSource);
  const brokers = config.TESSERA_KAFKA_BROKERS;
  const topics = mirroredTopicsOf(config).filter((mirrored) => mirrored.carries === 'accounts');
  if (brokers === undefined || topics.length === 0) return;
  const security = kafkaSecurityOf(config);
  const timeoutMs = options.timeoutMs ?? 30_000;
  await Promise.all(
    topics.map(async (mirrored) => {
      const feed = createKafkaFeed({ brokers, topic: mirrored.topic, logger: silentLogger, clientId: `tessera-cli-${mirrored.region}`, ...security });
      let consumer: FeedConsumer | undefined;
      let timer: NodeJS.Timeout | undefined;
      try {
        const read = (async () => {
          consumer = await feed.consume({
            groupId: privateGroupId(`tessera-mirror-${mirrored.region}`),
            since: 0,
            onEvent: ({ event }) => {
              if (event.type === 'ControlRegionChanged') fence.apply(event);
            },
          });
          await consumer.ready;
          return true;
        })();
        const outOfTime = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
        if (await Promise.race([read, outOfTime])) fence.caughtUp(mirrored.topic);
        else read.catch(() => undefined);
      } catch (error) {
        // The fence keeps waiting for this topic, and says so when the write is refused.
        if (error instanceof DomainError) throw error;
      } finally {
        clearTimeout(timer);
        await consumer?.close().catch(() => undefined);
        await feed.close().catch(() => undefined);
      }
    }),
  );
}
