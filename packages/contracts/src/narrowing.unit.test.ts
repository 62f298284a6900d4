import { describe, expect, it } from 'vitest';
import { accountTopicEventTypes } from './events.js';
import { errorCode } from './error-code.js';
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
