import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { RecordedEvent, TokenIssued } from '@tessera/events';
import { AccountFamilies, familiesModelBudget } from './account-families.js';

// A full collection on demand, so heap growth counts what the model holds, not garbage yet to go.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void; // the flag above exposes it to new contexts only; it is a function taking nothing

function heapAfterCollection(): number {
  collect();
  collect();
  return process.memoryUsage().heapUsed;
}

const t0 = 1_900_000_000;
const refreshTokenHash = randomBytes(32).toString('base64url');
const familyCount = 100_000;

/** A TokenIssued for a fresh family the way the issuer names them: region prefix and 16 random bytes. Every id is a string of its own, as parsed from the log. */
function issued(position: number, accountId: string, issuedAt: number): RecordedEvent {
  const event: TokenIssued = {
    type: 'TokenIssued',
    v: 1,
    familyId: `eu_${randomBytes(16).toString('base64url')}`,
    accountId,
    credentialId: 'cred',
    apiLoginId: 'tsl_x',
    generation: 0,
    refreshTokenHash,
    jti: `j${position}`,
    scope: [],
    issuedAt,
    accessExpiresAt: issuedAt + 3600,
    refreshExpiresAt: issuedAt + 86_400,
  };
  return { eventId: `e${position}`, stream: 's', revision: 0n, position: BigInt(position), event, metadata: {}, recordedAt: issuedAt * 1000 };
}

/** Heap bytes per family held, after applying `familyCount` issuances spread over `accounts` accounts (account ids built afresh per event). */
function bytesPerLiveFamily(accounts: number, issuedAt: number): { perFamily: number; held: number; heapGrowth: number } {
  const before = heapAfterCollection();
  const families = new AccountFamilies(() => t0);
  for (let i = 0; i < familyCount; i += 1) families.apply(issued(i + 1, `acc_${String(i % accounts).padStart(22, '0')}`, issuedAt));
  const heapGrowth = heapAfterCollection() - before;
  const held = families.size;
  return { perFamily: held === 0 ? 0 : heapGrowth / held, held, heapGrowth };
}

describe('the admin families read model stays within its memory budget', () => {
  it(`holds ${familyCount.toLocaleString('en')} live families of a few accounts within ${familiesModelBudget.bytesPerFamily} heap bytes each`, () => {
    const measured = bytesPerLiveFamily(100, t0);
    expect(measured.held).toBe(familyCount);
    expect(measured.perFamily).toBeLessThanOrEqual(familiesModelBudget.bytesPerFamily);
  });

  it(`holds ${familyCount.toLocaleString('en')} live families, each its account's only one, within ${familiesModelBudget.bytesPerFamilyOfItsOwnAccount} heap bytes each`, () => {
    const measured = bytesPerLiveFamily(familyCount, t0);
    expect(measured.held).toBe(familyCount);
    expect(measured.perFamily).toBeLessThanOrEqual(familiesModelBudget.bytesPerFamilyOfItsOwnAccount);
  });

  it('reading a history of families already dead holds none of them (under 1 MB of heap for 100,000)', () => {
    const measured = bytesPerLiveFamily(100, t0 - 200_000);
    expect(measured.held).toBe(0);
    expect(measured.heapGrowth).toBeLessThan(1_000_000);
  });
});
