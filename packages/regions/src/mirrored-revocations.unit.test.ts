import { describe, expect, it } from 'vitest';
import type { EventMetadata, RecordedEvent, RevocationMirrored, TesseraEvent, TokenCutEvent, TokenRevoked } from '@tessera/events';
import { MirroredRevocations, type MirroredRevocationsOptions } from './mirrored-revocations.js';

const t0 = 1_800_000_000;
const revoked = (familyId: string, rejectsUntil = t0 + 3600): TokenRevoked => ({ type: 'TokenRevoked', v: 1, familyId, accountId: 'acct-1', generation: 0, revokedAt: t0, accessExpiresAt: t0 + 900, rejectsUntil });
const cut: TokenCutEvent = { type: 'AccountTokensRevoked', v: 1, accountId: 'acct-1', notBefore: t0, rejectsUntil: t0 + 900, reason: 'operator', at: t0 };
const from = (eventId: string, region = 'a') => ({ region, eventId, recordedAt: t0 * 1000 });
// Family ids name their home region before the first underscore (tokens/refresh-token.ts): `a_…` is homed in a.
const familyOfA = 'a_QUFBQUFBQUFBQUFBQUFBQQ';
const familyOfB = 'b_QkJCQkJCQkJCQkJCQkJCQg';

function recorder(overrides: Partial<MirroredRevocationsOptions> = {}) {
  const appended: { stream: string; event: TesseraEvent; metadata: EventMetadata | undefined }[] = [];
  const options: MirroredRevocationsOptions = {
    store: {
      append: async (stream, events) => {
        for (const { event, metadata } of events) appended.push({ stream, event, metadata });
        return { nextExpectedRevision: 0n, position: BigInt(appended.length) };
      },
    },
    own: 'b',
    clockSkewSeconds: 60,
    refreshTokenTtlSeconds: 604_800,
    now: () => t0,
    anyStream: () => true,
    caughtUp: Promise.resolve(),
    untilAvailable: async (operation) => operation(),
    onRecordFailed: (error) => {
      throw error;
    },
    ...overrides,
  };
  return { mirrored: new MirroredRevocations(options), appended };
}
const settle = () => new Promise((resolve) => setImmediate(resolve));
let position = 0n;
const inLog = (event: TesseraEvent, stream: string): RecordedEvent => {
  position += 1n;
  return { eventId: `local-${position}`, stream, revision: 0n, position, event, metadata: {}, recordedAt: t0 * 1000 };
};

describe("another region's revocations, recorded for this region's receivers", () => {
  it('records a revocation of another region\'s family in mirroredrevocations-<region>, naming where it came from', async () => {
    const { mirrored, appended } = recorder();
    mirrored.receive(revoked(familyOfA), from('ev-1'));
    await settle();
    expect(appended).toEqual([
      {
        stream: 'mirroredrevocations-a',
        event: { type: 'RevocationMirrored', v: 1, region: 'a', sourceEventId: 'ev-1', sourceRecordedAt: t0 * 1000, revocation: revoked(familyOfA) } satisfies RevocationMirrored,
        metadata: { accountId: 'acct-1', actor: 'region:a' },
      },
    ]);
    expect(mirrored.recordedSinceStart).toBe(1);
  });

  it('records a family once however often it arrives (a redelivery, or the same revocation from its home after the region that made it)', async () => {
    const { mirrored, appended } = recorder();
    mirrored.receive(revoked(familyOfA), from('ev-1'));
    mirrored.receive(revoked(familyOfA), from('ev-1'));
    mirrored.receive(revoked(familyOfA), from('ev-7', 'c'));
    mirrored.receive(cut, from('ev-2'));
    mirrored.receive(cut, from('ev-2'));
    await settle();
    expect(appended.map(({ event }) => event.type === 'RevocationMirrored' && event.sourceEventId)).toEqual(['ev-1', 'ev-2']);
  });

  it('records nothing it finds in the log already: what it recorded before a restart, and a family this region revoked itself', async () => {
    const { mirrored, appended } = recorder();
    const reader = mirrored.reader;
    reader.apply(inLog({ type: 'RevocationMirrored', v: 1, region: 'a', sourceEventId: 'ev-1', sourceRecordedAt: 0, revocation: revoked(familyOfA) }, 'mirroredrevocations-a'));
    reader.apply(inLog({ type: 'RevocationMirrored', v: 1, region: 'a', sourceEventId: 'ev-2', sourceRecordedAt: 0, revocation: cut }, 'mirroredrevocations-a'));
    reader.apply(inLog(revoked('a_QkFEQkFEQkFEQkFEQkFEQg'), 'revocations-a_QkFEQkFEQkFEQkFEQkFEQg'));
    mirrored.receive(revoked(familyOfA), from('ev-1'));
    mirrored.receive(cut, from('ev-2'));
    mirrored.receive(revoked('a_QkFEQkFEQkFEQkFEQkFEQg'), from('ev-3'));
    await settle();
    expect(appended).toEqual([]);
  });

  it('leaves a family homed here to its own stream, and records nothing while no Shared Signals stream exists', async () => {
    const homedHere = recorder();
    homedHere.mirrored.receive(revoked(familyOfB), from('ev-1'));
    const noStream = recorder({ anyStream: () => false });
    noStream.mirrored.receive(revoked(familyOfA), from('ev-1'));
    await settle();
    expect(homedHere.appended).toEqual([]);
    expect(noStream.appended).toEqual([]);
  });

  it('waits for the log to be read before deciding: what the log holds is known first', async () => {
    let caughtUp!: () => void;
    const { mirrored, appended } = recorder({ caughtUp: new Promise<void>((resolve) => (caughtUp = resolve)) });
    mirrored.receive(revoked(familyOfA), from('ev-1'));
    await settle();
    expect(appended).toEqual([]);
    mirrored.reader.apply(inLog({ type: 'RevocationMirrored', v: 1, region: 'a', sourceEventId: 'ev-1', sourceRecordedAt: 0, revocation: revoked(familyOfA) }, 'mirroredrevocations-a'));
    caughtUp();
    await settle();
    expect(appended).toEqual([]);
  });
});
