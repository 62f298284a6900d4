import { createRequire } from 'node:module';
import kafkajs, { type Consumer, type EachBatchPayload } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import { CoordinatorAnswers, isConsumerNotRunning, isCoordinatorNotReady } from './kafka-coordinator.js';
import { runKafkaConsumer } from './kafka-consumer-run.js';
import { translateKafkaError } from './kafka-feed.js';
import { FeedPublishRejected, FeedUnavailable } from './revocation-feed.js';

/**
 * A group coordinator that is loading or moving, without a broker: kafkajs' own consumer (its run(),
 * runner, consumer group and crash handling, unchanged) on a cluster that answers the group requests
 * the way a fresh broker does, with kafkajs' own error objects. A fresh broker answers so only now
 * and then (test/e2e/kafka-fresh-broker.test.ts), and the verifier used to exit; here it happens
 * every time.
 */
const load = createRequire(import.meta.url);
// kafkajs' internals are untyped CommonJS: these are the shapes of the parts used (kafkajs is pinned, 2.2.4).
const { createErrorFromCode } = load('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error & { readonly type: string } };
const { KafkaJSGroupCoordinatorNotFound, KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded } = load('kafkajs/src/errors.js') as {
  KafkaJSGroupCoordinatorNotFound: new (message: string) => Error;
  KafkaJSNonRetriableError: new (message: string | Error, options?: { cause?: Error }) => Error;
  KafkaJSNumberOfRetriesExceeded: new (error: Error, options: { retryCount: number; retryTime: number }) => Error;
};
const { createLogger, LEVELS } = load('kafkajs/src/loggers/index.js') as { createLogger(options: { level: number; logCreator: () => () => void }): unknown; LEVELS: { NOTHING: number } };
const createConsumer = load('kafkajs/src/consumer/index.js') as (options: { cluster: unknown; groupId: string; logger: unknown; retry: { retries: number; initialRetryTime: number } }) => Consumer;

const coordinatorLoading = 14;
const coordinatorNotAvailable = 15;
const notCoordinator = 16;
const groupAuthorizationFailed = 30;
const topic = 'tessera.revocations';
const eachBatch = async (_payload: EachBatchPayload) => undefined;

/** The parts of kafkajs' cluster its consumer uses to join a group; joining ends as `join` does. */
function clusterWhoseGroup(join: { findCoordinator?: () => Error; joinGroup?: () => Error }) {
  return {
    connect: async () => undefined,
    disconnect: async () => undefined,
    refreshMetadataIfNecessary: async () => undefined,
    addMultipleTargetTopics: async () => undefined,
    removeBroker: () => undefined,
    findGroupCoordinator: async () => {
      if (join.findCoordinator) throw join.findCoordinator();
      return {
        joinGroup: async () => {
          throw join.joinGroup?.() ?? new Error('the scripted group has no answer');
        },
      };
    },
  };
}

const consumers: Consumer[] = [];
afterEach(async () => {
  // Also cancels the restart kafkajs plans after a retriable crash.
  await Promise.all(consumers.splice(0).map((consumer) => consumer.disconnect()));
});

function kafkajsConsumer(join: Parameters<typeof clusterWhoseGroup>[0]): Consumer {
  const consumer = createConsumer({
    cluster: clusterWhoseGroup(join),
    groupId: 'tessera-revocations-test',
    logger: createLogger({ level: LEVELS.NOTHING, logCreator: () => () => undefined }),
    retry: { retries: 0, initialRetryTime: 60_000 },
  });
  consumers.push(consumer);
  return consumer;
}

describe('kafkajs on a group coordinator that is loading', () => {
  it('run() resolves after the crash, and the seek after it fails without naming the cause: what the feed used to call a refusal', async () => {
    const consumer = kafkajsConsumer({ joinGroup: () => createErrorFromCode(coordinatorLoading) });
    const crashes: { error: Error; restart: boolean }[] = [];
    consumer.on(consumer.events.CRASH, ({ payload }) => void crashes.push(payload));
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachBatch });
    expect(crashes.map(({ error, restart }) => ({ name: error.name, type: (error as Error & { type?: string }).type, restart }))).toEqual([
      { name: 'KafkaJSProtocolError', type: 'GROUP_LOAD_IN_PROGRESS', restart: true },
    ]);
    let seekError: unknown;
    try {
      consumer.seek({ topic, partition: 0, offset: '0' });
    } catch (error) {
      seekError = error;
    }
    expect(String(seekError)).toBe('KafkaJSNonRetriableError: Consumer group was not initialized, consumer#run must be called first');
    // Alone, it still says "wait": kafkajs stopped the consumer, which is no refusal.
    expect(translateKafkaError(seekError, 'starting')).toBeInstanceOf(FeedUnavailable);
  });

  it.each([
    ['loading (COORDINATOR_LOAD_IN_PROGRESS, 14)', coordinatorLoading],
    ['not available (COORDINATOR_NOT_AVAILABLE, 15)', coordinatorNotAvailable],
  ])('a coordinator %s: the start fails with the crash, FeedUnavailable naming the coordinator', async (_state, code) => {
    const consumer = kafkajsConsumer({ joinGroup: () => createErrorFromCode(code) });
    const crashes: Error[] = [];
    consumer.on(consumer.events.CRASH, ({ payload }) => void crashes.push(payload.error));
    const failure = await runKafkaConsumer(consumer, topic, eachBatch, new Map([[0, 0n]])).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(crashes).toHaveLength(1);
    expect(failure).toBe(crashes[0]);
    const translated = translateKafkaError(failure, 'starting consumer group g on t');
    expect(translated).toBeInstanceOf(FeedUnavailable);
    expect(translated.message).toContain('the group coordinator is loading or moving');
  });

  it('a group the principal may not use (GROUP_AUTHORIZATION_FAILED at join) stays a refusal: kafkajs does not restart, and neither does the feed', async () => {
    const consumer = kafkajsConsumer({ joinGroup: () => createErrorFromCode(groupAuthorizationFailed) });
    const crashes: boolean[] = [];
    consumer.on(consumer.events.CRASH, ({ payload }) => void crashes.push(payload.restart));
    const failure = await runKafkaConsumer(consumer, topic, eachBatch, new Map([[0, 0n]])).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(crashes).toEqual([false]);
    expect(translateKafkaError(failure, 'starting')).toBeInstanceOf(FeedPublishRejected);
  });

  it('"Failed to find group coordinator": a wait when the broker last said the coordinator is not available, a refusal when it refused the group', async () => {
    const consumer = kafkajsConsumer({ findCoordinator: () => new KafkaJSGroupCoordinatorNotFound('Failed to find group coordinator') });
    const crashes: boolean[] = [];
    consumer.on(consumer.events.CRASH, ({ payload }) => void crashes.push(payload.restart));
    const failure = await runKafkaConsumer(consumer, topic, eachBatch, new Map()).then(
      () => undefined,
      (error: unknown) => error,
    );
    // kafkajs gives up on this one: its consumer stays stopped.
    expect(crashes).toEqual([false]);
    expect(String(failure)).toBe('KafkaJSGroupCoordinatorNotFound: Failed to find group coordinator');

    // What kafkajs logs for each failed FindCoordinator response (network/connection.js).
    const answers = new CoordinatorAnswers();
    const answered = (code: number) => answers.observe('Response GroupCoordinator(key: 10, version: 2)', createErrorFromCode(code).message);
    let mark = answers.mark();
    answered(coordinatorNotAvailable);
    answered(coordinatorNotAvailable);
    expect(translateKafkaError(failure, 'starting', { coordinatorNotReady: answers.notReadySince(mark) })).toBeInstanceOf(FeedUnavailable);

    mark = answers.mark();
    answered(groupAuthorizationFailed);
    const refused = translateKafkaError(failure, 'starting', { coordinatorNotReady: answers.notReadySince(mark) });
    expect(refused).toBeInstanceOf(FeedPublishRejected);
    expect(refused.message).toContain('with ACLs, check READ on the group');
    // No answer since the mark (another operation's answers do not count): a refusal, as before.
    expect(answers.notReadySince(answers.mark())).toBe(false);
    expect(translateKafkaError(failure, 'starting')).toBeInstanceOf(FeedPublishRejected);
  });
});

describe('coordinator classification', () => {
  it.each([coordinatorLoading, coordinatorNotAvailable, notCoordinator])('code %i is the coordinator not ready, however kafkajs wraps it', (code) => {
    const error = createErrorFromCode(code);
    expect(isCoordinatorNotReady(error)).toBe(true);
    // As kafkajs' retrier wraps what it gives up on.
    expect(isCoordinatorNotReady(new KafkaJSNumberOfRetriesExceeded(error, { retryCount: 5, retryTime: 1_000 }))).toBe(true);
    expect(isCoordinatorNotReady(new KafkaJSNonRetriableError(error, { cause: error }))).toBe(true);
    expect(translateKafkaError(new KafkaJSNonRetriableError(error, { cause: error }), 'consuming')).toBeInstanceOf(FeedUnavailable);
    // kafkajs logs the broker's answer with this message: CoordinatorAnswers knows it.
    const answers = new CoordinatorAnswers();
    answers.observe('Response GroupCoordinator(key: 10, version: 2)', error.message);
    expect(answers.notReadySince(0)).toBe(true);
  });

  it.each([
    ['group authorization', 30],
    ['topic authorization', 29],
    ['cluster authorization', 31],
    ['SASL authentication', 58],
    ['an invalid group id (configuration)', 24],
    ['an inconsistent group protocol (configuration)', 23],
  ])('%s stays a refusal', (_what, code) => {
    const error = createErrorFromCode(code);
    expect(isCoordinatorNotReady(error)).toBe(false);
    expect(translateKafkaError(new KafkaJSNonRetriableError(error, { cause: error }), 'consuming')).toBeInstanceOf(FeedPublishRejected);
  });

  it('only kafkajs\' own "not initialized" error counts as a stopped consumer', () => {
    expect(isConsumerNotRunning(new KafkaJSNonRetriableError('Consumer group was not initialized, consumer#run must be called first'))).toBe(true);
    expect(isConsumerNotRunning(new Error('Consumer group was not initialized, consumer#run must be called first'))).toBe(false);
    expect(isConsumerNotRunning(new KafkaJSNonRetriableError('Cannot subscribe to topic while consumer is running'))).toBe(false);
  });

  it('other answers to FindCoordinator, and other log lines, are not taken for a coordinator that is not ready', () => {
    const answers = new CoordinatorAnswers();
    answers.observe('Response Metadata(key: 3, version: 6)', createErrorFromCode(coordinatorNotAvailable).message);
    answers.observe('Response GroupCoordinator(key: 10, version: 2)', createErrorFromCode(groupAuthorizationFailed).message);
    expect(answers.notReadySince(0)).toBe(false);
  });
});

// kafkajs' Kafka client exports the same classes the internals above construct.
it('the internals used here are the classes kafkajs exports', () => {
  expect(KafkaJSNonRetriableError).toBe(kafkajs.KafkaJSNonRetriableError);
  expect(createErrorFromCode(coordinatorLoading)).toBeInstanceOf(kafkajs.KafkaJSProtocolError);
});
