import { describe, expect, it } from 'vitest';
import type { EventMetadata, RecordedEvent, TesseraEvent } from '@tessera/events';
import { indexedEventOf } from './audit-row.js';

const recorded = (event: TesseraEvent, metadata: EventMetadata = {}): RecordedEvent => ({ eventId: 'e', stream: 's', revision: 0n, position: 7n, event, metadata, recordedAt: 1_800_000_000_000 });

describe('the audit row of a Shared Signals event', () => {
  it("a subject added or removed is found by the account or the family it names, with the receiver as actor", () => {
    const added = indexedEventOf(recorded({ type: 'SsfSubjectAdded', v: 1, streamId: 's1', receiverId: 'r1', subject: { kind: 'account', accountId: 'acct-1' }, at: 1 }, { actor: 'ssf-receiver:r1', requestId: 'req' }));
    expect(added).toMatchObject({ type: 'SsfSubjectAdded', accountId: 'acct-1', familyId: undefined, generation: undefined, actor: 'ssf-receiver:r1', requestId: 'req', access: undefined });
    const removed = indexedEventOf(recorded({ type: 'SsfSubjectRemoved', v: 1, streamId: 's1', receiverId: 'r1', subject: { kind: 'family', familyId: 'fam-1' }, at: 1 }));
    expect(removed).toMatchObject({ accountId: undefined, familyId: 'fam-1', generation: undefined });
  });

  it("a status change carries its reason; nothing secret is copied (the sealed header, the token's hash)", () => {
    const paused = indexedEventOf(recorded({ type: 'SsfStreamStatusChanged', v: 1, streamId: 's1', receiverId: 'r1', status: 'paused', reason: 'delivery failing', by: 'transmitter', at: 1 }, { actor: 'ssf-transmitter' }));
    expect(paused).toMatchObject({ reason: 'delivery failing', actor: 'ssf-transmitter', accountId: undefined });
    const created = indexedEventOf(
      recorded({ type: 'SsfStreamCreated', v: 1, streamId: 's1', receiverId: 'r1', configuration: { delivery: { method: 'push', endpointUrl: 'https://r.example', sealedAuthorization: 'v1.a.b.c' }, eventsRequested: [], eventsDelivered: [] }, at: 1 }),
    );
    const registered = indexedEventOf(recorded({ type: 'SsfReceiverRegistered', v: 1, receiverId: 'r1', name: 'n', tokenHash: 'h'.repeat(43), at: 1 }));
    expect(JSON.stringify([created, registered], (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))).not.toMatch(/v1\.a\.b\.c|hhhh/);
  });
});
