import { describe, expect, it } from 'vitest';
import { problemFor } from '@tessera/http';
import { FamiliesCatchingUp } from './families-catching-up.js';

describe('the families read model catching up', () => {
  it('is a 503 that names the read model and asks again in a second, never the store outage answer', () => {
    const answer = problemFor(new FamiliesCatchingUp());
    expect(answer?.problem).toEqual({
      type: expect.stringContaining('unavailable'),
      title: 'Service Unavailable',
      status: 503,
      detail: 'the admin read model of token families is catching up with the event log',
    });
    expect(answer?.rule.retryAfterSeconds).toBe(1);
  });
});
