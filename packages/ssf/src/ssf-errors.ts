import { CodedError } from '@tessera/contracts';

/**
 * The transmitter's coded errors: routes throw them and the error handler answers from the
 * problem table (packages/http); the CLI turns them into exit codes.
 */

/** A stream id the receiver does not own, or that does not exist (the same 404: another receiver's streams are not revealed). */
export class SsfStreamNotFound extends CodedError {
  readonly code = 'ERR_SSF_STREAM_NOT_FOUND';
  constructor() {
    super('no such stream');
    this.name = 'SsfStreamNotFound';
  }
}

/** Stream management input the transmitter cannot take: answered 400, nothing appended. */
export class InvalidSsfRequest extends CodedError {
  readonly code = 'ERR_INVALID_SSF_REQUEST';
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
    this.name = 'InvalidSsfRequest';
  }
}

/**
 * A stream or receiver created under an id already taken. Ids are drawn at random, so this is a
 * can't-happen the deciders still refuse: a 500, never a second stream under one id.
 */
export class SsfStreamExists extends CodedError {
  readonly code = 'ERR_SSF_STREAM_EXISTS';
  constructor() {
    super('stream already exists');
  }
}

export class SsfReceiverExists extends CodedError {
  readonly code = 'ERR_SSF_RECEIVER_EXISTS';
  constructor() {
    super('receiver already exists');
  }
}

export class SsfReceiverNotFound extends CodedError {
  readonly code = 'ERR_SSF_RECEIVER_NOT_FOUND';
  constructor(receiverId: string) {
    super(`no receiver ${receiverId}`);
    this.name = 'SsfReceiverNotFound';
  }
}

/** A receiver name no receiver may have: the caller's mistake (CLI exit 2, HTTP 400). */
export class InvalidSsfReceiverInput extends CodedError {
  readonly code = 'ERR_INVALID_SSF_RECEIVER_INPUT';
  constructor(
    readonly reason: string,
    readonly field: 'name' | 'accounts' = 'name',
  ) {
    super(reason);
    this.name = 'InvalidSsfReceiverInput';
  }
}

/** A receiver that has as many streams as TESSERA_SSF_MAX_STREAMS_PER_RECEIVER allows: 409, nothing appended. */
export class SsfStreamLimitReached extends CodedError {
  readonly code = 'ERR_SSF_STREAM_LIMIT';
  constructor(readonly limit: number) {
    super(`this receiver has ${limit} streams, the most it may have (TESSERA_SSF_MAX_STREAMS_PER_RECEIVER): delete one first`);
    this.name = 'SsfStreamLimitReached';
  }
}

/** A verification request sooner than the stream's min_verification_interval after the last: 429 with Retry-After. */
export class SsfVerificationTooSoon extends CodedError {
  readonly code = 'ERR_SSF_VERIFICATION_TOO_SOON';
  constructor(readonly retryAfterSeconds: number) {
    super(`a verification was requested less than min_verification_interval ago: ask again in ${retryAfterSeconds} s`);
    this.name = 'SsfVerificationTooSoon';
  }
}

/**
 * A poll that returns at once (`returnImmediately`), carries no acknowledgment and would answer
 * nothing, sooner than TESSERA_SSF_EMPTY_POLL_INTERVAL after the stream's last empty answer:
 * 429 with Retry-After, the seconds left of the interval.
 */
export class SsfEmptyPollTooSoon extends CodedError {
  readonly code = 'ERR_SSF_EMPTY_POLL_TOO_SOON';
  constructor(readonly retryAfterSeconds: number) {
    super(`this stream has nothing to answer and answered nothing less than TESSERA_SSF_EMPTY_POLL_INTERVAL ago: poll again in ${retryAfterSeconds} s, or long-poll (returnImmediately: false)`);
    this.name = 'SsfEmptyPollTooSoon';
  }
}

/** A subject outside the accounts its receiver is scoped to (or a family Tessera cannot place in them): 403, nothing appended. */
export class SsfSubjectOutOfScope extends CodedError {
  readonly code = 'ERR_SSF_SUBJECT_OUT_OF_SCOPE';
  constructor() {
    super('this receiver is scoped to other accounts: it may follow only its accounts and their families');
    this.name = 'SsfSubjectOutOfScope';
  }
}

/** A poll of a stream while another poll of it is still being answered (RFC 8936 serves one at a time): 429 with Retry-After. */
export class SsfPollInFlight extends CodedError {
  readonly code = 'ERR_SSF_POLL_IN_FLIGHT';
  constructor() {
    super('another poll of this stream is still being answered: poll one at a time');
    this.name = 'SsfPollInFlight';
  }
}

/**
 * A poll or status read at a replica that does not hold the delivery lease, when no replica holds
 * it, the holder cannot be reached, or the request was forwarded once already: 503, Retry-After: 1.
 */
export class SsfDeliveryHolderUnavailable extends CodedError {
  readonly code = 'ERR_SSF_DELIVERY_HOLDER_UNAVAILABLE';
  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = 'SsfDeliveryHolderUnavailable';
  }
}
