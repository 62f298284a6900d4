import { describe, expect, it } from 'vitest';
import { redact } from './errors.js';
import { errorFromResponse, parseRetryAfter, type Transport } from './transport.js';

describe('parseRetryAfter', () => {
  it('reads delay-seconds and HTTP dates', () => {
    expect(parseRetryAfter('7')).toBe(7);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 0)).toBe(10);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});

describe('error messages', () => {
  const secret = 's3cr3t-refresh-token-'.repeat(12);
  const transport: Transport = { fetch: () => Promise.reject(new Error('unused')), timeoutMs: 1000, secrets: () => [secret] };

  it('redacts a secret a server echoes, even in a detail long enough to be shortened', async () => {
    const response = new Response(JSON.stringify({ title: 'Bad', detail: `x${secret}`.repeat(3), type: `urn:${secret}` }), {
      status: 400,
      headers: { 'content-type': 'application/problem+json' },
    });
    const error = await errorFromResponse(transport, 'refresh-oauth-token', response);
    expect(error.code).toBe('ERR_BAD_REQUEST');
    expect(error.message.length).toBeLessThanOrEqual(300);
    expect(error.message).not.toContain(secret.slice(0, 20));
    expect(error.problemType).toBe('urn:[redacted]');
  });

  it('redact replaces every occurrence', () => {
    expect(redact('a KEY b KEY', ['KEY', undefined, ''])).toBe('a [redacted] b [redacted]');
  });
});
