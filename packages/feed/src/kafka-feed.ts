import { randomUUID } from 'node:crypto';
import type { RecordedEvent } from '@tessera/contracts';
import { systemClock } from '@tessera/timing';
import kafkajs from 'kafkajs';
import type { Admin, Consumer, EachBatchPayload, LogEntry, Producer } from 'kafkajs';
import { superviseConsumer } from './consumer-supervisor.js';
import { decodeFeedMessage, encodeFeedMessage } from './feed-message.js';
import { CoordinatorAnswers, isConsumerNotRunning, isCoordinatorNotReady } from './kafka-coordinator.js';
import { runKafkaConsumer } from './kafka-consumer-run.js';
import { isAccessRefused, kafkaClientSecurity, redactSecrets, type KafkaSecurityOptions } from './kafka-security.js';
import { mendKafkaRequestQueue } from './kafkajs-request-queue.js';
import { inProcessSpan, startSendSpans } from './kafka-tracing.js';
import {
  FeedClosed,
  FeedHandlerFailed,
  FeedMessageInvalid,
  FeedPublishRejected,
  FeedUnavailable,
  consoleLogger,
  type ConsumeOptions,
  type FeedConsumer,
  type FeedError,
  type FeedLag,
  type FeedLogger,
  type RevocationFeed,
} from './revocation-feed.js';
import { InvalidArgument } from '@tessera/contracts';

// kafkajs is CommonJS whose named exports Node's ESM loader cannot detect: take them off the default export.
const { Kafka, KafkaJSError, KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded, Partitioners, logLevel } = kafkajs;
type Kafka = InstanceType<typeof Kafka>;

export const defaultRevocationTopic = 'tessera.revocations';

/** `ssl` and `sasl` (KafkaSecurityOptions) secure the connections; see docs/kafka.md. */
export interface KafkaFeedOptions extends KafkaSecurityOptions {
  /** `host:port,…` as in TESSERA_KAFKA_BROKERS, or a list. */
  readonly brokers: string | readonly string[];
  readonly topic?: string;
  readonly clientId?: string;
  readonly logger?: FeedLogger;
  /** How long one publish keeps retrying before it fails with FeedUnavailable. */
  readonly publishRetry?: { readonly retries?: number; readonly maxRetryTimeMs?: number };
}

export interface EnsureTopicOptions {
  readonly partitions?: number;
  readonly replicationFactor?: number;
  /**
   * Must exceed the longest token lifetime plus clock skew, or a late verifier cannot rebuild
   * the revocations that still matter. Default 7 days, as Kafka's own default.
   */
  readonly retentionMs?: number;
}

/** Errors a retry can fix: the broker is away, slow, or moving leadership. */
function isTransient(error: unknown): boolean {
  if (error instanceof KafkaJSNumberOfRetriesExceeded) return true;
  if (error instanceof KafkaJSNonRetriableError) return false;
  if (error instanceof KafkaJSError) return error.retriable;
  return false;
}

export interface TranslateOptions {
  /**
   * The broker's last answer to this operation's search for a group coordinator said "not
   * available" (CoordinatorAnswers): a KafkaJSGroupCoordinatorNotFound is then a wait, not a refusal.
   */
  readonly coordinatorNotReady?: boolean;
}

/**
 * Unavailable: a retry may succeed. Rejected: it will not until someone acts, and that includes
 * every refusal of access (a wrong password, a missing ACL, an untrusted certificate), even
 * when kafkajs ran out of retries on it first. A group coordinator that is loading or moving is
 * unavailable: a fresh broker's first group, a broker start, a coordinator moving to another broker.
 */
export function translateKafkaError(error: unknown, doing: string, options: TranslateOptions = {}): FeedError {
  if (error instanceof FeedClosed || error instanceof FeedUnavailable || error instanceof FeedPublishRejected) return error;
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  if (isAccessRefused(error)) return new FeedPublishRejected(`Kafka refused access while ${doing}: check the credentials, the ACLs and the TLS settings (${detail})`, { cause: error });
  const coordinatorNotFound = error instanceof Error && error.name === 'KafkaJSGroupCoordinatorNotFound';
  if (isCoordinatorNotReady(error) || (coordinatorNotFound && options.coordinatorNotReady === true)) {
    return new FeedUnavailable(`Kafka unavailable while ${doing}: the group coordinator is loading or moving (${detail})`, { cause: error });
  }
  if (isConsumerNotRunning(error)) return new FeedUnavailable(`Kafka unavailable while ${doing}: kafkajs had stopped the consumer after a crash (${detail})`, { cause: error });
  if (isTransient(error) || (error instanceof Error && /connect|ECONNREFUSED|ECONNRESET|timeout|broker/i.test(error.message))) {
    return new FeedUnavailable(`Kafka unavailable while ${doing} (${detail})`, { cause: error });
  }
  // kafkajs drops the broker's answer when it cannot find a group's coordinator, and a group the
  // principal may not READ is one such answer: say so, or the operator looks for a broker fault.
  const hint = coordinatorNotFound ? '; with ACLs, check READ on the group' : '';
  return new FeedPublishRejected(`Kafka refused ${doing} (${detail}${hint})`, { cause: error });
}

function kafkaLogCreator(logger: FeedLogger, secrets: () => readonly string[], coordinatorAnswers: CoordinatorAnswers) {
  // During an outage kafkajs reports every reconnect attempt; one line per message per 10 s says as much.
  const lastLogged = new Map<string, number>();
  return () =>
    ({ level, log }: LogEntry) => {
      const { message, ...details } = log;
      coordinatorAnswers.observe(message, details.error);
      // The relay retries a failed publish itself, forever; bounded retries here only hand it control.
      if (message.startsWith('Limiting retries for the idempotent producer')) return;
      if (level !== logLevel.ERROR && level !== logLevel.WARN) return;
      const now = systemClock.now();
      if (now - (lastLogged.get(message) ?? 0) < 10_000) return;
      lastLogged.set(message, now);
      if (lastLogged.size > 100) lastLogged.clear();
      // kafkajs' entries carry no credential today; one that did would still not reach the log.
      logger.warn({ kafka: redactSecrets(details, secrets()) }, `kafkajs: ${String(redactSecrets(message, secrets()))}`);
    };
}

/**
 * The production adapter on kafkajs. One idempotent producer with one request in flight, so
 * a retried send can neither duplicate nor reorder within a partition; publish() awaits the
 * broker's acknowledgement from all in-sync replicas before it resolves.
 */
export class KafkaRevocationFeed implements RevocationFeed {
  readonly topic: string;
  private readonly kafka: Kafka;
  private readonly logger: FeedLogger;
  private producer: Promise<Producer> | undefined;
  private publishing: Promise<void> = Promise.resolve();
  private readonly consumers = new Set<FeedConsumer>();
  private readonly coordinatorAnswers = new CoordinatorAnswers();
  private closed = false;

  constructor(private readonly options: KafkaFeedOptions) {
    this.topic = options.topic ?? defaultRevocationTopic;
    this.logger = options.logger ?? consoleLogger;
    const brokers = typeof options.brokers === 'string' ? options.brokers.split(',').map((b) => b.trim()).filter(Boolean) : [...options.brokers];
    if (brokers.length === 0) throw new InvalidArgument('KafkaRevocationFeed needs at least one broker');
    const security = kafkaClientSecurity(options);
    if (security.sasl?.mechanism === 'plain' && !security.ssl) this.logger.warn({ mechanism: 'plain' }, 'Kafka SASL PLAIN without TLS sends the password as it is: set ssl');
    mendKafkaRequestQueue();
    this.kafka = new Kafka({
      clientId: options.clientId ?? 'tessera',
      brokers,
      ...(security.ssl === undefined ? {} : { ssl: security.ssl }),
      ...(security.sasl === undefined ? {} : { sasl: security.sasl }),
      connectionTimeout: 3_000,
      requestTimeout: 10_000,
      // Connecting and metadata retry here, below the producer's own retries; kafkajs' default
      // (up to 30 s between attempts) would hide an outage from the relay for half a minute.
      retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
      logLevel: logLevel.WARN,
      logCreator: kafkaLogCreator(this.logger, security.secrets, this.coordinatorAnswers),
    });
  }

  /** Creates the topic if it is missing. Production creates it on purpose; this serves tests and first runs. */
  async ensureTopic(options: EnsureTopicOptions = {}): Promise<void> {
    const admin = this.kafka.admin();
    try {
      await admin.connect();
      const topics = await admin.listTopics();
      if (topics.includes(this.topic)) return;
      await admin.createTopics({
        waitForLeaders: true,
        topics: [
          {
            topic: this.topic,
            numPartitions: options.partitions ?? 3,
            replicationFactor: options.replicationFactor ?? 1,
            configEntries: [
              { name: 'retention.ms', value: String(options.retentionMs ?? 7 * 24 * 3600 * 1000) },
              // Seeking by time must mean "recorded in the log at", which the producer sets.
              { name: 'message.timestamp.type', value: 'CreateTime' },
            ],
          },
        ],
      });
    } catch (error) {
      throw translateKafkaError(error, `creating topic ${this.topic}`);
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }

  publish(events: readonly RecordedEvent[]): Promise<void> {
    if (this.closed) return Promise.reject(new FeedClosed());
    if (events.length === 0) return Promise.resolve();
    // Chained so that a later call never overtakes an earlier one that is still retrying.
    const sent = this.publishing.then(async () => {
      // One span per event and attempt, begun when the attempt is: a retry after an outage is its own.
      const spans = startSendSpans(this.topic, events);
      const messages = events.map((recorded, index) => {
        const encoded = encodeFeedMessage(recorded);
        return { key: encoded.key, value: encoded.value, timestamp: String(encoded.timestamp), headers: { ...spans.headers[index], type: encoded.headers.type } };
      });
      const producer = await this.connectedProducer().catch((error: unknown) => {
        spans.end(error);
        throw error;
      });
      try {
        await producer.send({ topic: this.topic, acks: -1, messages });
        spans.end();
      } catch (error) {
        const translated = translateKafkaError(error, `publishing ${messages.length} events to ${this.topic}`);
        spans.end(translated);
        // After a failed send the producer's sequence numbers may no longer match the broker's;
        // a fresh producer id starts clean, and the caller's retry may at worst duplicate.
        this.dropProducer();
        throw translated;
      }
    });
    this.publishing = sent.catch(() => undefined);
    return sent;
  }

  private connectedProducer(): Promise<Producer> {
    if (!this.producer) {
      const retry = this.options.publishRetry;
      const producer = this.kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        // Java-compatible murmur2, so a consumer in another language maps keys to the same partitions.
        createPartitioner: Partitioners.DefaultPartitioner,
        retry: { retries: retry?.retries ?? 5, initialRetryTime: 100, maxRetryTime: retry?.maxRetryTimeMs ?? 2_000 },
      });
      const connecting = producer.connect().then(
        () => producer,
        (error: unknown) => {
          if (this.producer === connecting) this.producer = undefined;
          throw translateKafkaError(error, 'connecting the producer');
        },
      );
      this.producer = connecting;
    }
    return this.producer;
  }

  private dropProducer(): void {
    const dropped = this.producer;
    this.producer = undefined;
    dropped?.then((p) => p.disconnect()).catch(() => undefined);
  }

  async consume(options: ConsumeOptions): Promise<FeedConsumer> {
    if (this.closed) throw new FeedClosed();
    const consumer = await createKafkaConsumer(this.kafka, this.topic, options, this.logger, this.coordinatorAnswers);
    const tracked: FeedConsumer = {
      ready: consumer.ready,
      lag: () => consumer.lag(),
      close: async () => {
        this.consumers.delete(tracked);
        await consumer.close();
      },
    };
    this.consumers.add(tracked);
    return tracked;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.publishing;
    await Promise.all([...this.consumers].map((consumer) => consumer.close()));
    const producer = this.producer;
    this.producer = undefined;
    await producer?.then((p) => p.disconnect()).catch(() => undefined);
  }
}

interface PartitionProgress {
  /** Offset of the first message not yet handed to onEvent when the consumer started. */
  readonly target: bigint;
}

async function createKafkaConsumer(kafka: Kafka, topic: string, options: ConsumeOptions, logger: FeedLogger, coordinatorAnswers: CoordinatorAnswers): Promise<FeedConsumer> {
  const { groupId, since, onEvent, onError } = options;
  // Only the coordinator answers that follow a mark are this consumer's: another may share the client.
  let answersMark = coordinatorAnswers.mark();
  const translate = (error: unknown, doing: string) => translateKafkaError(error, doing, { coordinatorNotReady: coordinatorAnswers.notReadySince(answersMark) });
  const admin: Admin = kafka.admin();
  const pending = new Map<number, PartitionProgress>();
  /**
   * With `since`, offsets below the starting point are never handed on. kafkajs can only seek
   * once the consumer runs, so a first fetch may start elsewhere; this makes that harmless.
   * (admin.setOffsets would avoid it, but it joins the group with a consumer it never closes,
   * and the real consumer then waits seconds for that member to leave.)
   */
  const floor = new Map<number, bigint>();
  /** Per partition, the first offset this consumer reads. */
  let starts = new Map<number, bigint>();
  const startedAt = systemClock.now();
  try {
    await admin.connect();
    const ends = await admin.fetchTopicOffsets(topic);
    if (since !== undefined) {
      const byTime = await admin.fetchTopicOffsetsByTimestamp(topic, since);
      starts = new Map(byTime.map(({ partition, offset }) => [partition, BigInt(offset)]));
      for (const [partition, offset] of starts) floor.set(partition, offset);
    } else {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      starts = new Map(
        ends.map(({ partition, low }) => {
          const offset = committed?.partitions.find((p) => p.partition === partition)?.offset ?? '-1';
          const start = BigInt(offset) < 0n ? BigInt(low) : BigInt(offset);
          return [partition, start < BigInt(low) ? BigInt(low) : start];
        }),
      );
    }
    for (const { partition, high } of ends) {
      const start = starts.get(partition) ?? BigInt(high);
      if (start < BigInt(high)) pending.set(partition, { target: BigInt(high) });
    }
  } catch (error) {
    throw translate(error, `preparing consumer group ${groupId} on ${topic}`);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }

  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const checkReady = () => {
    if (pending.size === 0) markReady();
  };
  checkReady();

  /** Per partition, the offset after the last message handed on: where a replacement consumer resumes. */
  const handedOn = new Map<number, bigint>();
  /** When the newest event handed on was recorded, for lag(). */
  let lastRecordedAt: number | undefined;

  const eachBatch = async ({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload) => {
    const lowest = floor.get(batch.partition);
    for (const message of batch.messages) {
      if (!isRunning() || isStale()) return;
      if (lowest !== undefined && BigInt(message.offset) < lowest) {
        resolveOffset(message.offset);
        continue;
      }
      // Events read again to rebuild at start get no span: a restart would add one to the old trace of every retained event.
      const rebuilding = BigInt(message.offset) < (pending.get(batch.partition)?.target ?? 0n);
      try {
        const decoded = decodeFeedMessage(message.value);
        if (decoded.known) {
          const event = decoded.feedEvent;
          const delivery = { partition: batch.partition, offset: message.offset };
          await (rebuilding ? onEvent(event, delivery) : inProcessSpan(topic, groupId, message.headers, event, delivery, () => onEvent(event, delivery)));
        }
        // An event type this version does not know is skipped: handed on all the same, so lag and offsets move past it.
        lastRecordedAt = decoded.known ? decoded.feedEvent.recordedAt : decoded.recordedAt;
      } catch (error) {
        onError?.(error instanceof FeedMessageInvalid ? error : new FeedHandlerFailed('onEvent threw', { cause: error }));
      }
      resolveOffset(message.offset);
      handedOn.set(batch.partition, BigInt(message.offset) + 1n);
      await heartbeat();
    }
    const progress = pending.get(batch.partition);
    if (progress && BigInt(batch.lastOffset()) + 1n >= progress.target) {
      pending.delete(batch.partition);
      checkReady();
    }
  };

  const supervisor = superviseConsumer<Consumer>({
    create: () =>
      kafka.consumer({
        groupId,
        allowAutoTopicCreation: false,
        // The broker's minimum: after a broker restart the old membership expires sooner and the group rejoins.
        sessionTimeout: 6_000,
        heartbeatInterval: 1_000,
        maxWaitTimeInMs: 100,
        retry: { retries: 8, initialRetryTime: 100, maxRetryTime: 2_000 },
      }),
    start: async (consumer) => {
      // A replacement resumes after the last event handed on: the group's commits may trail it by
      // up to a second, and with `since` the group may have none at all.
      for (const [partition, offset] of handedOn) if (offset > (floor.get(partition) ?? -1n)) floor.set(partition, offset);
      answersMark = coordinatorAnswers.mark();
      try {
        await runKafkaConsumer(consumer, topic, eachBatch, floor);
      } catch (error) {
        // Also cancels the restart kafkajs may have planned after a crash: the caller decides what follows.
        await consumer.disconnect().catch(() => undefined);
        throw translate(error, `starting consumer group ${groupId} on ${topic}`);
      }
    },
    onCrash: (error, restarting) => {
      logger.warn({ groupId, topic, restart: restarting }, restarting ? 'feed consumer crashed; kafkajs restarts it' : 'feed consumer crashed and kafkajs gave up on it; replacing it');
      onError?.(translate(error, `consuming ${topic}`));
    },
    onReplacement: ({ attempt, error }) => {
      if (error === undefined) logger.warn({ groupId, topic, attempt }, 'feed consumer replaced; following the topic again');
      else onError?.(translate(error, `replacing the consumer of ${topic}`));
    },
  });
  await supervisor.start();

  // Connected on the first lag() (a scrape), kept for the next ones, closed with the consumer.
  let lagAdmin: Promise<Admin> | undefined;
  const lag = async (): Promise<FeedLag> => {
    lagAdmin ??= (async () => {
      const connecting = kafka.admin();
      await connecting.connect();
      return connecting;
    })().catch((error: unknown) => {
      lagAdmin = undefined;
      throw translateKafkaError(error, `reading the end of ${topic}`);
    });
    const ends = await (await lagAdmin).fetchTopicOffsets(topic);
    let pendingEvents = 0n;
    for (const { partition, high } of ends) {
      const next = handedOn.get(partition) ?? starts.get(partition) ?? 0n;
      if (BigInt(high) > next) pendingEvents += BigInt(high) - next;
    }
    return { pendingEvents: Number(pendingEvents), behindSince: pendingEvents > 0n ? (lastRecordedAt ?? startedAt) : undefined };
  };

  return {
    ready,
    lag,
    close: async () => {
      await supervisor.close();
      await lagAdmin?.then((admin) => admin.disconnect()).catch(() => undefined);
    },
  };
}

export function createKafkaFeed(options: KafkaFeedOptions): KafkaRevocationFeed {
  return new KafkaRevocationFeed(options);
}

/** A group id of one's own, for a consumer that must see every event (a projection). */
export function privateGroupId(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}
