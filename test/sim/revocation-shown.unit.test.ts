import { describe, expect, it } from 'vitest';
import { showsRevocationApplied, type ChargeWitness } from './revocation-shown.js';

const quiet = { inFlight: 0, started: 3 };
/** A charge with the newest token (g6) of a family a revoke was sent for, no refresh around it, refused. */
const refusedAfterRevoke: ChargeWitness = {
  status: 401,
  presentedGeneration: 6,
  before: quiet,
  after: { ...quiet, revokeSent: true, rotatedUnseen: false, newestGeneration: 6 },
};

describe('a charge refused with 401, read as the revocation applied in that region', () => {
  it('is one when a revoke was sent, the token is the newest, and no refresh of the family was under way', () => {
    expect(showsRevocationApplied(refusedAfterRevoke)).toBe(true);
  });

  it('is not one while a refresh of the family is still unanswered when the charge is answered: it may have rotated the token', () => {
    // Seed 2005681169: "charge g6 in b → 401" inside "refresh g6 in a → 200 g7", read as applied.
    expect(showsRevocationApplied({ ...refusedAfterRevoke, before: { inFlight: 1, started: 4 }, after: { ...refusedAfterRevoke.after, inFlight: 1, started: 4 } })).toBe(false);
  });

  it('is not one when a refresh was sent and answered while the charge was under way, or was under way when it was sent', () => {
    expect(showsRevocationApplied({ ...refusedAfterRevoke, after: { ...refusedAfterRevoke.after, started: 4 } })).toBe(false);
    expect(showsRevocationApplied({ ...refusedAfterRevoke, before: { inFlight: 1, started: 3 } })).toBe(false);
  });

  it('is not one without a revoke sent, for an older generation, after an unseen rotation, or for another answer', () => {
    expect(showsRevocationApplied({ ...refusedAfterRevoke, after: { ...refusedAfterRevoke.after, revokeSent: false } })).toBe(false);
    expect(showsRevocationApplied({ ...refusedAfterRevoke, presentedGeneration: 5 })).toBe(false);
    expect(showsRevocationApplied({ ...refusedAfterRevoke, after: { ...refusedAfterRevoke.after, rotatedUnseen: true } })).toBe(false);
    expect(showsRevocationApplied({ ...refusedAfterRevoke, status: 200 })).toBe(false);
    expect(showsRevocationApplied({ ...refusedAfterRevoke, status: undefined })).toBe(false);
  });
});
