import { describe, expect, it } from 'vitest';
import { AuditThreadError } from './audit-thread-error.js';

describe('AuditThreadError', () => {
  it("keeps a Tessera code the thread answered with, so an untrusted archive is still answered 503", () => {
    const error = new AuditThreadError('ERR_ARCHIVE_UNTRUSTED', 'the archive failed its verification');
    expect(error.code).toBe('ERR_ARCHIVE_UNTRUSTED');
    expect(error.message).toBe('the archive failed its verification');
  });

  it("makes any other code the thread's failure, keeping the one it came with", () => {
    const error = new AuditThreadError('SQLITE_IOERR', 'disk I/O error');
    expect(error.code).toBe('ERR_AUDIT_THREAD_FAILED');
    expect(error.threadCode).toBe('SQLITE_IOERR');
    expect(new AuditThreadError(undefined, 'x').code).toBe('ERR_AUDIT_THREAD_FAILED');
  });
});
