import { describe, expect, it } from 'vitest';
import { CreateStreamRequest, PollRequest, ReplaceStreamRequest } from './stream-wire.js';

describe('a polled stream\'s delivery on the way in', () => {
  // SGNL's caep.dev ssfreceiver sends "endpoint_url": "" with every poll stream it creates: the
  // URL is the transmitter's to supply, so an empty one says nothing and is ignored like any other.
  it('takes an empty endpoint_url, as it takes none or any other', () => {
    for (const endpoint of [{ endpoint_url: '' }, {}, { endpoint_url: 'https://receiver.example/anything' }]) {
      expect(CreateStreamRequest.safeParse({ delivery: { method: 'urn:ietf:rfc:8936', ...endpoint } }).success).toBe(true);
      expect(ReplaceStreamRequest.safeParse({ stream_id: 's', delivery: { method: 'urn:ietf:rfc:8936', ...endpoint } }).success).toBe(true);
    }
  });

  it('still refuses a push stream without an endpoint to push to', () => {
    expect(CreateStreamRequest.safeParse({ delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: '' } }).success).toBe(false);
  });
});

describe('a poll request', () => {
  // SGNL's caep.dev ssfreceiver names the stream in the body of every poll, beside the URL's query.
  it('takes a stream_id in the body (the route refuses one that is not the polled stream\'s)', () => {
    expect(PollRequest.safeParse({ stream_id: 'a8e94455-e44b-467b-8559-de589a9683ff', returnImmediately: true, ack: ['jti'] }).success).toBe(true);
  });

  // Members receivers send that RFC 8936 does not name: i2goSignals' timeoutSecs, caep.dev's max_events.
  it('ignores members RFC 8936 does not name, and reads those it does', () => {
    const parsed = PollRequest.safeParse({ maxEvents: 7, timeoutSecs: 10, max_events: 100 });
    expect(parsed.success).toBe(true);
    expect(parsed.data).toEqual({ maxEvents: 7 });
  });

  it('still refuses a member RFC 8936 names with a value it cannot take', () => {
    expect(PollRequest.safeParse({ maxEvents: 1001 }).success).toBe(false);
    expect(PollRequest.safeParse({ ack: 'jti' }).success).toBe(false);
  });
});
