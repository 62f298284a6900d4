import type { RecordedEvent, TesseraEvent, TesseraEventType } from '@tessera/contracts';
import { InvariantBroken, CodedError, isOneOf, revocationEventTypes } from '@tessera/contracts';

/**
 * The RevocationFeed port: the relay publishes revocation-relevant events from the log,
 * verifiers and downstream services consume them. Order holds per key (per family for
 * family events); delivery is at least once, so consumers dedupe. Every adapter passes
 * `revocationFeedContract` unchanged.
 */

/**
 * What the relay publishes: what a verifier elsewhere needs to reject a token or trust a key. The
 * cuts (AccountTokensRevoked, CredentialTokensRevoked) come with revocationEventTypes.
 */
export const feedEventTypes = [
  ...revocationEventTypes,
  // A revoked credential or a narrowed permission set changes what a live token may do.
  'ApiCredentialRevoked',
  'LegacyCredentialRevoked',
  'PermissionsChanged',
] as const satisfies readonly TesseraEventType[];
export type FeedEventType = (typeof feedEventTypes)[number];

/** One event as carried by the feed: the contracts event plus where it sits in the log. */
export interface FeedEvent<E extends TesseraEvent = TesseraEvent> {
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
  /** Called one event at a time, in order per key. A throw is reported to onError and the event counts as handled. */
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
export function feedKey(event: TesseraEvent): string {
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
    case 'AccountTokensRevoked':
    case 'CredentialTokensRevoked':
    case 'LegacyTokenIssued':
      return event.accountId;
    case 'AuthenticationFailuresCounted':
      return event.accountId ?? 'unknown';
    case 'AdminTokenIssued':
    case 'AdminTokenRevoked':
      // Never published (not a feed event type); keyed all the same, so every event has a key.
      return event.adminTokenId;
    case 'SecretHashingKeyRecorded':
    case 'SecretHashingKeyRotated':
      // Never published either: a log's own record of its key.
      return event.fingerprint;
    case 'ArchiveKeyTrusted':
      // Never published: the log's record of its archive's keys.
      return event.fingerprint;
    case 'ArchiveHeadRecorded':
      // Never published: the log's record of its archive's manifest head.
      return event.sha256;
    case 'SsfReceiverRegistered':
    case 'SsfReceiverRevoked':
    case 'SsfStreamCreated':
    case 'SsfStreamUpdated':
    case 'SsfStreamStatusChanged':
    case 'SsfSubjectAdded':
    case 'SsfSubjectRemoved':
    case 'SsfStreamDeleted':
    case 'SsfVerificationRequested':
      // Never published: the Shared Signals transmitter's receivers and streams, keyed all the same.
      return 'receiverId' in event ? event.receiverId : 'unknown';
    case 'ControlRegionChanged':
      // One key for every change, so they keep their order on the account topic.
      return 'controlregion';
    case 'RevocationMirrored':
      // Never published: the region that made the revocation published it already; keyed all the same.
      return event.revocation.type === 'TokenRevoked' ? event.revocation.familyId : event.revocation.accountId;
    default: {
      // Every known type is handled above, or this fails to compile; a newer writer's event still has a type.
      const unknownEvent: { readonly type: string } = event satisfies never;
      throw new InvariantBroken(`no feed key for ${unknownEvent.type}`);
    }
  }
}

export function isFeedEventType(type: string): type is FeedEventType {
  return isOneOf(feedEventTypes, type);
}
