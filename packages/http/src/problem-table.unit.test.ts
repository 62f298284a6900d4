import { describe, expect, expectTypeOf, it } from 'vitest';
import { CodedError, InvariantBroken, type ErrorCode } from '@tessera/contracts';
import { oauthAnswerFor, problemCodes, problemFor, problemTable, type ProblemCode, type ProblemRule } from './problem-table.js';

/** What the table is checked against where it is declared. */
const mapsEvery = (table: Record<ProblemCode, ProblemRule>) => table;

class FamilyNotFound extends CodedError {
  readonly code = 'ERR_FAMILY_NOT_FOUND';
}
class RefreshTokenUsed extends CodedError {
  readonly code = 'ERR_REFRESH_TOKEN_USED';
}
class StoreUnavailable extends CodedError {
  readonly code = 'ERR_EVENT_STORE_UNAVAILABLE';
}
class ScopeRefused extends CodedError {
  readonly code = 'ERR_INVALID_SCOPE';
}

describe('the problem table', () => {
  it('maps exactly the problem codes, each an ErrorCode (checked by the type checker)', () => {
    expectTypeOf<keyof typeof problemTable>().toEqualTypeOf<ProblemCode>();
    expectTypeOf<ProblemCode>().toExtend<ErrorCode>();

    const { ERR_FAMILY_NOT_FOUND: left, ...missingOne } = problemTable;
    expect(left.status).toBe(404);
    // @ts-expect-error a table missing one of its codes does not compile: that code would become a 500
    mapsEvery(missingOne);

    // A code renamed in @tessera/contracts: the list of problem codes no longer fits ErrorCode.
    type RenamedCodes = Exclude<ErrorCode, 'ERR_FAMILY_NOT_FOUND'> | 'ERR_FAMILY_MISSING';
    // @ts-expect-error problemCodes names ERR_FAMILY_NOT_FOUND, which the renamed union no longer has
    const stale: readonly RenamedCodes[] = problemCodes;
    expect(stale).toBe(problemCodes);
    expect(Object.keys(problemTable).sort()).toEqual([...problemCodes].sort());
  });

  it('answers a coded error from its code, and nothing else', () => {
    expect(problemFor(new FamilyNotFound('no family f1'))?.problem).toMatchObject({ status: 404, detail: 'no family f1' });
    expect(problemFor(new InvariantBroken('a state ruled out'))).toBeUndefined();
    // A code that is no key of the table, though a key of every object: still a 500.
    expect(problemFor(Object.assign(new Error('x'), { code: 'toString' }))).toBeUndefined();
    expect(problemFor({ code: 'ERR_FAMILY_NOT_FOUND', message: 'not an Error' })).toBeUndefined();
  });

  it('answers the OAuth 2.0 endpoints from the same rows: their column, an outage, or a 500', () => {
    // One description for every refused refresh token, whatever the error said (the family id is public).
    expect(oauthAnswerFor(new RefreshTokenUsed('family f1 was refreshed before'))?.answer).toEqual({
      status: 400,
      error: 'invalid_grant',
      description: 'the refresh token is not valid (unknown, expired, already used, revoked, or issued to another client)',
    });
    expect(oauthAnswerFor(new ScopeRefused('the scope is wider than the client\'s permissions: x'))?.answer).toEqual({ status: 400, error: 'invalid_scope', description: 'the scope is wider than the client\'s permissions: x' });
    // An outage has no OAuth column: it is a temporarily_unavailable with the problem's fixed detail and Retry-After.
    const outage = oauthAnswerFor(new StoreUnavailable('SQLITE_BUSY at /var/lib'));
    expect(outage?.answer).toEqual({ status: 503, error: 'temporarily_unavailable', description: problemTable.ERR_EVENT_STORE_UNAVAILABLE.detail });
    expect(outage?.rule.retryAfterSeconds).toBe(2);
    // A code the OAuth endpoints never throw is a 500 there, not an answer made up from its problem.
    expect(oauthAnswerFor(new FamilyNotFound('no family f1'))).toBeUndefined();
    expect(oauthAnswerFor(new InvariantBroken('a state ruled out'))).toBeUndefined();
  });
});
