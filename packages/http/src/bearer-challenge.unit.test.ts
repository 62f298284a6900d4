import { describe, expect, it } from 'vitest';
import { bearerChallenge } from './bearer-challenge.js';

describe('bearerChallenge (RFC 6750 section 3)', () => {
  it('has no error code when the request carried no bearer credentials', () => {
    expect(bearerChallenge({})).toBe('Bearer');
  });

  it('names invalid_token, and insufficient_scope with the scope needed', () => {
    expect(bearerChallenge({ error: 'invalid_token' })).toBe('Bearer error="invalid_token"');
    expect(bearerChallenge({ error: 'insufficient_scope', scope: 'transaction:charge' })).toBe('Bearer error="insufficient_scope", scope="transaction:charge"');
  });

  it('keeps the scope one quoted-string: quotes and backslashes escaped, control characters dropped', () => {
    expect(bearerChallenge({ error: 'insufficient_scope', scope: 'a"b\\c\r\nd' })).toBe('Bearer error="insufficient_scope", scope="a\\"b\\\\cd"');
  });
});
