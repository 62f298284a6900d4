import { CodedError } from '@tessera/contracts';

/** A question asked of the audit thread before its index has read the log to the end: a 500, as an unready server's answer. */
export class AuditIndexBehind extends CodedError {
  readonly code = 'ERR_AUDIT_INDEX_BEHIND';
  constructor() {
    super('the audit index has not caught up with the log yet');
  }
}
