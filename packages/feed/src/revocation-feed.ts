import type { PublishedEvent, RecordedEvent } from '@tessera/contracts';
import { CodedError, InvariantBroken, isOneOf, revocationTopicEventTypes } from '@tessera/contracts';

/**
 * The RevocationFeed port: the relay publishes revocation-relevant events from the log,
 * verifiers and downstream services consume them. Order holds per key (per family for
 * family events); delivery is at least once, so consumers dedupe. Every adapter passes
 * `revocationFeedContract` unchanged.
 */

/**
 * What the relay publishes on the revocation topic: what a verifier elsewhere needs to reject a
 * token or trust a key. The cuts (AccountTokensRevoked, CredentialTokensRevoked) are among them.
 */
export const feedEventTypes = revocationTopicEventTypes;
export type FeedEventType = (typeof feedEventTypes)[number];

/** One event as carried by the feed: a published event of the contracts plus where it sits in the log. */
export interface FeedEvent<E extends PublishedEvent = PublishedEvent> {
  readonly eventId: string;
  /** Global log position; increases along the log, so it orders and dedupes. */
  readonly position: bigint;
  readonly stream: string;
  readonly revision: bigint;
  /** Epoch milliseconds when the event store recorded it; also the Kafka message timestamp. */
  readonly recordedAt: number;
  /** The request that caused it, to follow one request across services. */
  readonly requestId?: string;
  readonly event: E;
}

/** Where a delivered event came from. Positions only increase within one partition. */
export interface Delivery {
  readonly partition: number;
  readonly offset: string;
}

export interface ConsumeOptions {
  /**
   * Consumers in one group share the events; each group gets all of them. A projection that
   * must see everything uses a group of its own.
   */
  readonly groupId: string;
  /**
   * Epoch milliseconds: start at the first event recorded at or after this time, whatever the
   * group consumed before. Omitted: resume the group, or start at the oldest retained event.
   */
  readonly since?: number;
  /**
   * Called one event at a time, in order per key. A throw is reported to onError and the event counts
   * as handled. A message whose event type this version does not know (a newer Tessera's) is skipped
   * without a call: it counts as handled too.
   */
  readonly onEvent: (event: FeedEvent, delivery: Delivery) => void | Promise<void>;
  readonly onError?: (error: FeedError) => void;
}

export interface FeedConsumer {
  /** Resolves once every event that existed when the consumer started has been handed to onEvent. */
  readonly ready: Promise<void>;
  /** How far behind the topic this consumer is now (asks the broker: call it when scraped, not per event). */
  lag(): Promise<FeedLag>;
  close(): Promise<void>;
}

/** A consumer's distance from the end of its topic. */
export interface FeedLag {
  /** Events on the topic not yet handed to onEvent. */
  readonly pendingEvents: number;
  /**
   * While events are pending: epoch milliseconds when the newest event handed on was recorded
   * (when the consumer started, before any), so now minus this bounds how far behind its source's
   * log the consumer is. Undefined when none is pending.
   */
  readonly behindSince: number | undefined;
}

export interface RevocationFeed {
  /**
   * Resolves only when the feed has durably accepted every event, in the order given. Calls
   * are published one after another in call order.
   */
  publish(events: readonly RecordedEvent[]): Promise<void>;
  consume(options: ConsumeOptions): Promise<FeedConsumer>;
  close(): Promise<void>;
}

/** pino's calling convention, so the services' logger plugs in as it is. */
export interface FeedLogger {
  info(details: object, message?: string): void;
  warn(details: object, message?: string): void;
  error(details: object, message?: string): void;
}

export const consoleLogger: FeedLogger = {
  info: (details, message) => console.info(message ?? '', details),
  warn: (details, message) => console.warn(message ?? '', details),
  error: (details, message) => console.error(message ?? '', details),
};

export const silentLogger: FeedLogger = { info: () => {}, warn: () => {}, error: () => {} };

export abstract class FeedError extends CodedError {}

/** The broker could not be reached or did not acknowledge in time: retry later, nothing was lost. */
export class FeedUnavailable extends FeedError {
  readonly code = 'ERR_FEED_UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FeedUnavailable';
  }
}

/** The broker refused the events for a reason a retry will not fix (size, authorization, configuration). */
export class FeedPublishRejected extends FeedError {
  readonly code = 'ERR_FEED_PUBLISH_REJECTED';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FeedPublishRejected';
  }
}

/** A message on the feed is not a Tessera feed event; it is skipped. */
export class FeedMessageInvalid extends FeedError {
  readonly code = 'ERR_FEED_MESSAGE_INVALID';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FeedMessageInvalid';
  }
}

/** onEvent threw; the event was skipped. */
export class FeedHandlerFailed extends FeedError {
  readonly code = 'ERR_FEED_HANDLER_FAILED';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FeedHandlerFailed';
  }
}

export class FeedClosed extends FeedError {
  readonly code = 'ERR_FEED_CLOSED';
  constructor() {
    super('revocation feed is closed');
    this.name = 'FeedClosed';
  }
}

/** The partitioning key: one family's events share a key, hence a partition, hence an order. */
export function feedKey(event: PublishedEvent): string {
  switch (event.type) {
    case 'TokenIssued':
    case 'TokenRotated':
    case 'TokenRevoked':
      return event.familyId;
    case 'SigningKeyPublished':
    case 'SigningKeyRetired':
      return event.kid;
    case 'AccountRegistered':
    case 'ApiCredentialIssued':
    case 'ApiCredentialRevoked':
    case 'LegacyCredentialIssued':
    case 'LegacyCredentialRevoked':
    case 'PermissionsChanged':
    case 'AccountAudiencesSet':
    case 'ClientKeysSet':
    case 'ClientDpopSet':
    case 'AccountTokensRevoked':
    case 'CredentialTokensRevoked':
    case 'AccountDisabled':
    case 'AccountEnabled':
      return event.accountId;
    case 'ControlRegionChanged':
      // One key for every change, so they keep their order on the account topic.
      return 'controlregion';
    default:
      // Every published type is handled above, or this fails to compile.
      return unreachable(event);
  }
}

function unreachable(event: never): never {
  // Reached only if a caller got past the type check: name the type so the failure says which.
  const stray: { readonly type?: unknown } = event;
  throw new InvariantBroken(`no feed key for ${String(stray.type)}`);
}

export function isFeedEventType(type: string): type is FeedEventType {
  return isOneOf(feedEventTypes, type);
}
