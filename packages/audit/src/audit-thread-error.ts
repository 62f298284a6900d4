import { CodedError, isErrorCode, type ErrorCode } from '@tessera/contracts';

/**
 * An error the audit thread answered with, rebuilt on the asking side: a Tessera code keeps its
 * answer (an untrusted archive is still a 503); any other (SQLite's, Node's, none) is the thread's
 * failure, a 500, with the code it came with kept as `threadCode` for the log.
 */
export class AuditThreadError extends CodedError {
  readonly code: ErrorCode;
  readonly threadCode: string | undefined;

  constructor(threadCode: string | undefined, message: string) {
    super(message);
    this.code = threadCode !== undefined && isErrorCode(threadCode) ? threadCode : 'ERR_AUDIT_THREAD_FAILED';
    this.threadCode = threadCode;
  }
}
