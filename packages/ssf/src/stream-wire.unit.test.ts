import { describe, expect, it } from 'vitest';
import { CreateStreamRequest, ReplaceStreamRequest } from './stream-wire.js';

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
