/**
 * A consumer group is served by one broker, its coordinator, which owns the group's partition of
 * __consumer_offsets. While that partition is being created (a fresh broker, on its first group
 * request) or loaded (after a broker start, or when the coordinator moves to another broker), the
 * broker answers group requests with one of three codes. Each says "ask again shortly", never "no":
 * for Tessera they are an outage to wait out, not a refusal.
 *
 * kafkajs (2.2.4, pinned) names Kafka's COORDINATOR_LOAD_IN_PROGRESS (14), COORDINATOR_NOT_AVAILABLE
 * (15) and NOT_COORDINATOR (16) by their older names, and these are the messages it gives them.
 */
const coordinatorNotReady = new Map([
  ['GROUP_LOAD_IN_PROGRESS', "The coordinator is loading and hence can't process requests for this group"],
  ['GROUP_COORDINATOR_NOT_AVAILABLE', 'The group coordinator is not available'],
  ['NOT_COORDINATOR_FOR_GROUP', 'This is not the correct coordinator for this group'],
]);
const coordinatorNotReadyMessages = new Set(coordinatorNotReady.values());

/** kafkajs' seek(), pause(), resume() and commitOffsets() on a consumer that is not running. */
const consumerNotRunning = 'Consumer group was not initialized';

/** kafkajs' errors are plain objects to TypeScript; these are the fields it sets on them, wrappers included. */
interface KafkaJSErrorFields {
  readonly name?: unknown;
  readonly type?: unknown;
  readonly message?: unknown;
  readonly cause?: unknown;
  readonly originalError?: unknown;
}

function fieldsOf(error: unknown): KafkaJSErrorFields | undefined {
  return error !== null && typeof error === 'object' ? error : undefined;
}

/**
 * True when an error, or one it wraps (kafkajs wraps by `cause` and, in retries, by
 * `originalError`), is the broker saying the group's coordinator is loading or elsewhere.
 */
export function isCoordinatorNotReady(error: unknown, depth = 0): boolean {
  const fields = fieldsOf(error);
  if (depth > 5 || fields === undefined) return false;
  if (typeof fields.type === 'string' && coordinatorNotReady.has(fields.type)) return true;
  return isCoordinatorNotReady(fields.cause, depth + 1) || isCoordinatorNotReady(fields.originalError, depth + 1);
}

/**
 * kafkajs' `Consumer group was not initialized, consumer#run must be called first`: the consumer is
 * not running at that moment. Tessera seeks only after run(), so it means kafkajs stopped the
 * consumer after a crash (and may be about to restart it): the crash says why, this does not.
 */
export function isConsumerNotRunning(error: unknown): boolean {
  const fields = fieldsOf(error);
  return fields?.name === 'KafkaJSNonRetriableError' && typeof fields.message === 'string' && fields.message.startsWith(consumerNotRunning);
}

/**
 * kafkajs answers every failed search for a group's coordinator with one error,
 * `KafkaJSGroupCoordinatorNotFound: Failed to find group coordinator`, and drops the broker's reason:
 * "not available yet" (a fresh broker still creating __consumer_offsets, after kafkajs' retries) and
 * "you may not use this group" (GROUP_AUTHORIZATION_FAILED) look the same. The reason survives only
 * in the error line kafkajs logs for each failed response (`Response GroupCoordinator(key: 10, …)`,
 * with the message as `error`); this keeps the latest, so a caller can tell the two apart.
 */
export class CoordinatorAnswers {
  #count = 0;
  #latest: { readonly index: number; readonly answer: string } | undefined;

  /** Every kafkajs log entry goes through here, whatever its level. */
  observe(message: string, error: unknown): void {
    if (!message.startsWith('Response GroupCoordinator(') || typeof error !== 'string') return;
    this.#count += 1;
    this.#latest = { index: this.#count, answer: error };
  }

  /** Where the answers stand: an operation that begins now caused only those after this mark. */
  mark(): number {
    return this.#count;
  }

  /** True when the broker's latest failed answer since `mark` said the coordinator is not ready. */
  notReadySince(mark: number): boolean {
    return this.#latest !== undefined && this.#latest.index > mark && coordinatorNotReadyMessages.has(this.#latest.answer);
  }
}
