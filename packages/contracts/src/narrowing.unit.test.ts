import { describe, expect, it } from 'vitest';
import { accountTopicEventTypes } from './events.js';
import { CodedError, InvalidArgument, InvariantBroken, errorCode, errorCodes, isErrorCode, tesseraErrorCode } from './error-code.js';
import { isOneOf } from './one-of.js';

describe('errorCode', () => {
  it("reads a Node system error's code", () => {
    const error = Object.assign(new Error('no such file'), { code: 'ENOENT' });
    expect(errorCode(error)).toBe('ENOENT');
  });

  it('reads the code of a plain object thrown, as drivers sometimes do', () => {
    expect(errorCode({ code: 'SQLITE_BUSY' })).toBe('SQLITE_BUSY');
  });

  it('is undefined for a numeric code, an error without one, and what is not an object', () => {
    expect(errorCode({ code: 14 })).toBeUndefined();
    expect(errorCode(new Error('plain'))).toBeUndefined();
    expect(errorCode(null)).toBeUndefined();
    expect(errorCode(undefined)).toBeUndefined();
    expect(errorCode('ENOENT')).toBeUndefined();
  });
});

describe('isOneOf', () => {
  it('accepts a listed name and refuses one that is not listed', () => {
    expect(isOneOf(accountTopicEventTypes, 'ControlRegionChanged')).toBe(true);
    expect(isOneOf(accountTopicEventTypes, 'AdminTokenIssued')).toBe(false);
    expect(isOneOf(accountTopicEventTypes, '')).toBe(false);
  });
});

describe('coded errors', () => {
  class Stray extends CodedError {
    // @ts-expect-error a code must be one of ErrorCode: an undeclared one does not compile
    readonly code = 'ERR_NOT_DECLARED';
  }

  it('carry their code and their class name', () => {
    const error = new InvariantBroken('a state ruled out');
    expect(error).toBeInstanceOf(CodedError);
    expect(error.name).toBe('InvariantBroken');
    expect(errorCode(error)).toBe('ERR_INVARIANT_BROKEN');
    expect(tesseraErrorCode(error)).toBe('ERR_INVARIANT_BROKEN');
    expect(new InvalidArgument('bad').code).toBe('ERR_INVALID_ARGUMENT');
    expect(new Stray('x').name).toBe('Stray');
  });

  it("tells Tessera's codes from Node's and a driver's", () => {
    expect(isErrorCode('ERR_ARCHIVE_UNTRUSTED')).toBe(true);
    expect(isErrorCode('ENOENT')).toBe(false);
    expect(tesseraErrorCode(Object.assign(new Error('busy'), { code: 'SQLITE_BUSY' }))).toBeUndefined();
    expect(new Set(errorCodes).size).toBe(errorCodes.length);
  });
});
