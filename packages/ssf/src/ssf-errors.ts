/**
 * The transmitter's coded errors: routes throw them and the error handler answers from the
 * problem table (packages/http); the CLI turns them into exit codes.
 */

/** A stream id the receiver does not own, or that does not exist (the same 404: another receiver's streams are not revealed). */
export class SsfStreamNotFound extends Error {
  readonly code = 'ERR_SSF_STREAM_NOT_FOUND';
  constructor() {
    super('no such stream');
    this.name = 'SsfStreamNotFound';
  }
}

/** Stream management input the transmitter cannot take: answered 400, nothing appended. */
export class InvalidSsfRequest extends Error {
  readonly code = 'ERR_INVALID_SSF_REQUEST';
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
    this.name = 'InvalidSsfRequest';
  }
}

export class SsfReceiverNotFound extends Error {
  readonly code = 'ERR_SSF_RECEIVER_NOT_FOUND';
  constructor(receiverId: string) {
    super(`no receiver ${receiverId}`);
    this.name = 'SsfReceiverNotFound';
  }
}

/** A receiver name no receiver may have: the caller's mistake (CLI exit 2, HTTP 400). */
export class InvalidSsfReceiverInput extends Error {
  readonly code = 'ERR_INVALID_SSF_RECEIVER_INPUT';
  readonly field = 'name';
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'InvalidSsfReceiverInput';
  }
}
