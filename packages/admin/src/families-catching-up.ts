import { CodedError } from '@tessera/contracts';

/**
 * The admin API's families read model has not caught up with the log (in time): the route answers
 * 503 with Retry-After rather than act on, or list, fewer families than there are.
 */
export class FamiliesCatchingUp extends CodedError {
  readonly code = 'ERR_READ_MODEL_CATCHING_UP';
  constructor() {
    super('the admin read model of token families is catching up with the event log');
    this.name = 'FamiliesCatchingUp';
  }
}
