/**
 * Keeps one kafkajs consumer running for as long as its owner wants it.
 *
 * kafkajs restarts a crashed consumer only when the error is retriable. Some errors a broker
 * restart produces are not: when a broker shuts down while the group is rejoining, the consumer
 * asks for its coordinator, every connection is refused, and kafkajs gives up with
 * `KafkaJSNonRetriableError: Failed to find group coordinator` (a known kafkajs behaviour, reported upstream). Its consumer
 * then stays stopped for good, with nothing but one log line to show for it. For a verifier that
 * follows revocations that is the worst way to fail: it keeps answering, from a projection that no
 * longer moves, so a revoked token stays accepted.
 *
 * The supervisor replaces a consumer that kafkajs left stopped with a new one, with backoff, until
 * one starts or the owner closes it. Where the new one starts reading is the owner's business
 * (`start`): the feed resumes after the last event it handed on.
 *
 * A crash while a consumer is starting belongs to that start: kafkajs' run() crashes and returns
 * when the group cannot be joined (a coordinator still loading), and `start` rejects with the crash.
 * Handled as a crash too, it would schedule a replacement behind the back of whoever handles the
 * rejection: the first start's caller, or the replacement's own backoff.
 */
import { Retry, type BackoffPolicy } from '@tessera/timing';

/** What the supervisor needs of a consumer: kafkajs' crash event, and a way to let go of it. */
export interface CrashingConsumer {
  on(eventName: 'consumer.crash', listener: (event: { payload: { error: Error; restart: boolean } }) => void): unknown;
  disconnect(): Promise<void>;
}

/** What kafkajs says of a crash: the error, and whether it starts the consumer again itself. */
interface CrashPayload {
  readonly error: Error;
  readonly restart: boolean;
}

export interface ConsumerSupervisorOptions<C extends CrashingConsumer> {
  /** A new consumer, not yet connected. */
  create(): C;
  /** Connects, subscribes and runs it; rejects if it cannot. */
  start(consumer: C): Promise<void>;
  /** Every crash of a running consumer, whoever restarts after it (`restarting`: kafkajs restarts it itself). */
  onCrash(error: Error, restarting: boolean): void;
  /** A replacement is running after `attempt` tries; or a try failed with `error`. */
  onReplacement(outcome: { readonly attempt: number; readonly error?: unknown }): void;
  /** Waits between tries. Default: 500 ms doubling to 10 s. */
  readonly backoff?: BackoffPolicy;
}

export interface ConsumerSupervisor {
  /** Starts the first consumer; rejects as `start` does, so the caller decides about a first failure. */
  start(): Promise<void>;
  /** Consumers started to replace one kafkajs left stopped. */
  readonly replacements: number;
  close(): Promise<void>;
}

export function superviseConsumer<C extends CrashingConsumer>(options: ConsumerSupervisorOptions<C>): ConsumerSupervisor {
  const replacing = new Retry({ backoff: options.backoff ?? { initialMs: 500, maxMs: 10_000 } });
  let current: C | undefined;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let replacements = 0;
  /** Consumers whose start is in flight, with the first crash each had meanwhile. */
  const starting = new Map<C, CrashPayload | undefined>();

  const crashed = (consumer: C, { error, restart }: CrashPayload) => {
    options.onCrash(error, restart);
    // A crash of a consumer already replaced or closed is that consumer's last word.
    if (!restart && consumer === current && !closed) replaceAfter(error);
  };

  const watched = (): C => {
    const consumer = options.create();
    consumer.on('consumer.crash', ({ payload }) => {
      if (starting.has(consumer)) starting.set(consumer, starting.get(consumer) ?? payload);
      else crashed(consumer, payload);
    });
    return consumer;
  };

  /** Starts a consumer; a crash meanwhile is dropped if the start rejects, and handled once it resolves if not. */
  const startWatched = async (consumer: C): Promise<void> => {
    starting.set(consumer, undefined);
    let crash: CrashPayload | undefined;
    try {
      await options.start(consumer);
    } finally {
      crash = starting.get(consumer);
      starting.delete(consumer);
    }
    if (crash !== undefined) crashed(consumer, crash);
  };

  /** Counts the failure (the crash, or a replacement that could not start) and tries again after the backoff. */
  const replaceAfter = (failure: unknown) => {
    const wait = replacing.failed(failure);
    const attempt = replacing.failures;
    timer = setTimeout(() => {
      timer = undefined;
      if (closed) return;
      const replacement = watched();
      current = replacement;
      startWatched(replacement).then(
        async () => {
          if (closed) {
            await replacement.disconnect().catch(() => undefined);
            return;
          }
          replacements += 1;
          replacing.succeeded();
          options.onReplacement({ attempt });
        },
        (error: unknown) => {
          options.onReplacement({ attempt, error });
          if (!closed && replacement === current) replaceAfter(error);
        },
      );
    }, wait);
  };

  return {
    start: async () => {
      const first = watched();
      current = first;
      try {
        await startWatched(first);
      } catch (error) {
        // The caller decides what follows a failed first start; nothing is left to replace.
        current = undefined;
        throw error;
      }
    },
    get replacements() {
      return replacements;
    },
    close: async () => {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      await current?.disconnect();
    },
  };
}
