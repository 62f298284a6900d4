import { describe, expect, it } from 'vitest';
import { bearerChallenge, dpopChallenge } from './bearer-challenge.js';

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

describe('dpopChallenge (RFC 9449 section 7.1)', () => {
  const algs = ['ES256', 'EdDSA'];

  it('names the algorithms taken, with no error code when the request carried no credentials', () => {
    expect(dpopChallenge({}, algs)).toBe('DPoP algs="ES256 EdDSA"');
  });

  it('names invalid_dpop_proof and invalid_token with their description, insufficient_scope with the scope', () => {
    expect(dpopChallenge({ error: 'invalid_dpop_proof', description: 'the DPoP proof was used before' }, algs)).toBe(
      'DPoP error="invalid_dpop_proof", error_description="the DPoP proof was used before", algs="ES256 EdDSA"',
    );
    expect(dpopChallenge({ error: 'invalid_token', description: 'the access token has expired' }, algs)).toBe(
      'DPoP error="invalid_token", error_description="the access token has expired", algs="ES256 EdDSA"',
    );
    expect(dpopChallenge({ error: 'insufficient_scope', scope: 'orders:write' }, algs)).toBe('DPoP error="insufficient_scope", scope="orders:write", algs="ES256 EdDSA"');
  });

  it('keeps the description one quoted-string', () => {
    expect(dpopChallenge({ error: 'invalid_dpop_proof', description: 'the proof\'s "htu"\r\n' }, algs)).toBe('DPoP error="invalid_dpop_proof", error_description="the proof\'s \\"htu\\"", algs="ES256 EdDSA"');
  });
});
