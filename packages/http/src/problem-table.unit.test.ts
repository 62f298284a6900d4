import { describe, expect, expectTypeOf, it } from 'vitest';
import { CodedError, InvariantBroken, type ErrorCode } from '@tessera/contracts';
import { problemCodes, problemFor, problemTable, type ProblemCode, type ProblemRule } from './problem-table.js';

/** What the table is checked against where it is declared. */
const mapsEvery = (table: Record<ProblemCode, ProblemRule>) => table;

class FamilyNotFound extends CodedError {
  readonly code = 'ERR_FAMILY_NOT_FOUND';
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
});
