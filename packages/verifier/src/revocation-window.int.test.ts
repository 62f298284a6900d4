import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { streams, type TesseraEvent, type TesseraEventType } from '@tessera/events';
import { SqliteEventStore } from '@tessera/event-store-sqlite';
import { revocationRebuildAfter } from '@tessera/event-store';

/**
 * The rebuild window over a real SQLite log, on an injected clock: it follows the keys that can
 * still verify a token, never a configured lifetime.
 */
const t0 = 1_900_000_000;
const hash = 'A'.repeat(43);
const revocationTypes: TesseraEventType[] = ['TokenRotated', 'TokenRevoked'];
const key = (kid: string, at: number): TesseraEvent => ({ type: 'SigningKeyPublished', v: 1, kid, alg: 'ES256', publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }, at });
const family = { accountId: 'acc', credentialId: 'cred', apiLoginId: 'login', refreshTokenHash: hash, scope: [], refreshExpiresAt: t0 + 604_800 };
const issued = (familyId: string, at: number): TesseraEvent => ({ type: 'TokenIssued', v: 1, ...family, familyId, generation: 0, jti: `${familyId}-0`, issuedAt: at, accessExpiresAt: at + 3600 });
const rotated = (familyId: string, at: number): TesseraEvent => ({
  type: 'TokenRotated',
  v: 1,
  ...family,
  familyId,
  generation: 1,
  jti: `${familyId}-1`,
  issuedAt: at,
  accessExpiresAt: at + 5,
  rejectsUntil: at + 3600,
});
const revoked = (familyId: string, at: number): TesseraEvent => ({ type: 'TokenRevoked', v: 1, familyId, accountId: 'acc', generation: 0, revokedAt: at, accessExpiresAt: at + 3600, rejectsUntil: at + 3600 });

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * k1 published at t0 and a family A rotated under it; k2 published at t0 + 100 and k1 retired
 * (kept until t0 + 3700); a family B issued and revoked under k2. Times are epoch seconds.
 */
async function logWithTwoKeys(): Promise<SqliteEventStore> {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-revocation-window-'));
  dirs.push(dir);
  let clockMs = 0;
  const store = new SqliteEventStore({ file: join(dir, 'events.db'), clock: { now: () => clockMs } });
  const at = async (seconds: number, stream: string, event: TesseraEvent) => {
    clockMs = seconds * 1000;
    await store.append(stream, [{ event }], { expectedRevision: 'any' });
  };
  await at(t0, streams.signingKeys(), key('k1', t0));
  await at(t0 + 1, streams.family('A'), issued('A', t0 + 1));
  await at(t0 + 2, streams.family('A'), rotated('A', t0 + 2));
  await at(t0 + 100, streams.signingKeys(), key('k2', t0 + 100));
  await at(t0 + 100, streams.signingKeys(), { type: 'SigningKeyRetired', v: 1, kid: 'k1', at: t0 + 100, retainUntil: t0 + 3700 });
  await at(t0 + 101, streams.family('B'), issued('B', t0 + 101));
  await at(t0 + 102, streams.family('B'), revoked('B', t0 + 102));
  return store;
}

async function revocationsRead(store: SqliteEventStore, nowSeconds: number): Promise<string[]> {
  const after = await revocationRebuildAfter(store, nowSeconds);
  return (await store.readAll({ after, types: revocationTypes })).map(({ event }) => `${event.type} ${'familyId' in event ? event.familyId : ''}`);
}

describe('revocation rebuild window on a SQLite log', () => {
  it('while the first key can still verify, reads every rotation and revocation since its publication', async () => {
    const store = await logWithTwoKeys();
    try {
      expect(await revocationsRead(store, t0 + 3699)).toEqual(['TokenRotated A', 'TokenRevoked B']);
    } finally {
      await store.close();
    }
  });

  it('hours later, still reads a revocation older than any short configured lifetime, since its key is current', async () => {
    const store = await logWithTwoKeys();
    try {
      // A window of "now − TTL" with TTL = 5 s would start at t0 + 7195 and read nothing.
      expect(await revocationsRead(store, t0 + 7200)).toEqual(['TokenRevoked B']);
    } finally {
      await store.close();
    }
  });

  it('from the moment the first key is refused, starts just before the next key is published', async () => {
    const store = await logWithTwoKeys();
    try {
      const after = await revocationRebuildAfter(store, t0 + 3700);
      const [k2] = (await store.readStream(streams.signingKeys())).filter(({ event }) => event.type === 'SigningKeyPublished' && event.kid === 'k2');
      expect(after).toBe(k2!.position - 1n);
    } finally {
      await store.close();
    }
  });
});
