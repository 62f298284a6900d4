import { describe, expect, it } from 'vitest';
import { accountTopicEventTypes, familyCheckEventTypes, isPublishedEventType, publishedEventTypes, revocationTopicEventTypes } from './events.js';

describe('the published events', () => {
  it('are exactly the types some topic carries: the revocation, account and family topics', () => {
    const carried = new Set([...revocationTopicEventTypes, ...accountTopicEventTypes, ...familyCheckEventTypes]);
    expect([...publishedEventTypes].sort()).toEqual([...carried].sort());
  });

  it('leave out what Tessera writes to its log only', () => {
    for (const internal of ['LegacyTokenIssued', 'AuthenticationFailuresCounted', 'AdminTokenIssued', 'SecretHashingKeyRotated', 'ArchiveHeadRecorded', 'SsfStreamCreated', 'RevocationMirrored']) {
      expect(isPublishedEventType(internal)).toBe(false);
    }
    expect(isPublishedEventType('TokenRevoked')).toBe(true);
  });
});
