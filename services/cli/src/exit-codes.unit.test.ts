import { describe, expect, expectTypeOf, it } from 'vitest';
import { InvariantBroken, type ErrorCode } from '@tessera/contracts';
import { AuditIndexBusy, CliError, NotFound } from './cli-error.js';
import { byErrorCode, exitCodeFor, exitCodes, foreseenCodes, isForeseen, type ForeseenCode } from './exit-codes.js';

type ExitCode = (typeof exitCodes)[keyof typeof exitCodes];
/** What the table is checked against where it is declared. */
const mapsEvery = (table: Record<ForeseenCode, ExitCode>) => table;

describe('exit codes', () => {
  it('maps exactly the foreseen codes, each an ErrorCode (checked by the type checker)', () => {
    expectTypeOf<keyof typeof byErrorCode>().toEqualTypeOf<ForeseenCode>();
    expectTypeOf<ForeseenCode>().toExtend<ErrorCode>();

    const { ERR_NOT_CONTROL_REGION: left, ...missingOne } = byErrorCode;
    expect(left).toBe(exitCodes.notControlRegion);
    // @ts-expect-error a table missing one of its codes does not compile: that code would become exit 1
    mapsEvery(missingOne);

    type RenamedCodes = Exclude<ErrorCode, 'ERR_NOT_CONTROL_REGION'> | 'ERR_WRONG_REGION';
    // @ts-expect-error foreseenCodes names ERR_NOT_CONTROL_REGION, which the renamed union no longer has
    const stale: readonly RenamedCodes[] = foreseenCodes;
    expect(stale).toBe(foreseenCodes);
    expect(Object.keys(byErrorCode).sort()).toEqual([...foreseenCodes].sort());
  });

  it('ends the process by the error code, and 1 for anything unforeseen', () => {
    expect(exitCodeFor(new CliError('usage'))).toBe(exitCodes.usage);
    expect(exitCodeFor(new NotFound('no such account'))).toBe(exitCodes.notFound);
    expect(exitCodeFor(new AuditIndexBusy('try again'))).toBe(exitCodes.failure);
    expect(isForeseen(new AuditIndexBusy('try again'))).toBe(true);
    expect(exitCodeFor(new InvariantBroken('a state ruled out'))).toBe(exitCodes.failure);
    expect(isForeseen(new InvariantBroken('a state ruled out'))).toBe(false);
    expect(exitCodeFor(Object.assign(new Error('x'), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' }))).toBe(exitCodes.failure);
    expect(exitCodeFor(Object.assign(new Error('x'), { code: 'constructor' }))).toBe(exitCodes.failure);
  });
});
