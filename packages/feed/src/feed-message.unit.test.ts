import { describe, expect, it } from 'vitest';
import { decodeFeedMessage, encodeFeedMessage } from './feed-message.js';
import { FeedMessageInvalid } from './revocation-feed.js';
import { createRecorder, tokenRevoked } from './sample-events.js';

/** A message as a newer Tessera would put it on a topic: the same envelope, an event type this version has never heard of. */
function messageOf(event: Record<string, unknown>): string {
  return JSON.stringify({ eventId: 'e-9', position: '42', stream: 'somewhere-1', revision: '0', recordedAt: 1_900_000_000_000, event });
}

describe('decodeFeedMessage', () => {
  it('decodes a published event it knows, with where it sits in the log', () => {
    const recorded = createRecorder(7n)(tokenRevoked('fam-1', 2, 1_900_000_000), 1_900_000_000_000);
    const decoded = decodeFeedMessage(encodeFeedMessage(recorded).value);
    expect(decoded).toEqual({
      known: true,
      feedEvent: { eventId: recorded.eventId, position: 7n, stream: 'tokenfamily-fam-1', revision: 0n, recordedAt: 1_900_000_000_000, requestId: 'req-7', event: recorded.event },
    });
  });

  it('skips an event type it does not know, without an error, keeping its id and position', () => {
    const decoded = decodeFeedMessage(messageOf({ type: 'TokenTeleported', v: 1, familyId: 'fam-1', at: 1_900_000_000 }));
    expect(decoded).toEqual({ known: false, type: 'TokenTeleported', eventId: 'e-9', position: 42n, recordedAt: 1_900_000_000_000 });
  });

  it('skips an event Tessera writes to its log but does not publish, as it skips any unknown type', () => {
    const decoded = decodeFeedMessage(messageOf({ type: 'AdminTokenRevoked', v: 1, adminTokenId: 'adm-1', at: 1_900_000_000 }));
    expect(decoded).toMatchObject({ known: false, type: 'AdminTokenRevoked' });
  });

  it('refuses a known event type in a shape it does not accept, and a value that is no feed message', () => {
    expect(() => decodeFeedMessage(messageOf({ type: 'TokenRevoked', v: 1, familyId: 'fam-1' }))).toThrow(FeedMessageInvalid);
    expect(() => decodeFeedMessage(JSON.stringify({ event: { type: 'TokenRevoked' } }))).toThrow(FeedMessageInvalid);
    expect(() => decodeFeedMessage('not json')).toThrow(FeedMessageInvalid);
    expect(() => decodeFeedMessage(null)).toThrow(FeedMessageInvalid);
  });
});
