import { CodedError } from '@tessera/contracts';

/** A start that cannot happen (a taken port, a missing file): the message is the one line an operator reads. */
export class StartFailure extends CodedError {
  readonly code = 'ERR_START_FAILED';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartFailure';
  }
}
