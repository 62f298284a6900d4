import { describe, expect, it } from 'vitest';
import { CliError } from './cli-error.js';
import { parseCommandOptions } from './command-options.js';

const options = { family: { type: 'string' }, type: { type: 'string', multiple: true }, json: { type: 'boolean' } } as const;

describe('parseCommandOptions', () => {
  it('takes an identifier that starts with "-" as the value of a string option', () => {
    const { values } = parseCommandOptions(['--family', '-1gmLzP8cV_ftmz85FpMmA', '--type', 'TokenRevoked', '--json'], options);
    expect(values).toEqual({ family: '-1gmLzP8cV_ftmz85FpMmA', type: ['TokenRevoked'], json: true });
  });

  it('leaves --name=value and boolean flags as they are', () => {
    const { values } = parseCommandOptions(['--family=--x', '--json'], options);
    expect(values).toEqual({ family: '--x', json: true });
  });

  it('refuses a single-valued flag given twice, rather than keeping the last value silently', () => {
    expect(() => parseCommandOptions(['--family', 'a', '--family', 'b'], options)).toThrow(new CliError('--family was given more than once; it takes one value'));
    expect(() => parseCommandOptions(['--family=a', '--family', 'b'], options)).toThrow(CliError);
    expect(() => parseCommandOptions(['--json', '--json'], options)).toThrow(CliError);
    expect(parseCommandOptions(['--type', 'A', '--type', 'B'], options).values).toEqual({ type: ['A', 'B'] });
    // A value that looks like the flag is a value, not a repeat.
    expect(parseCommandOptions(['--family', '--family'], options).values).toEqual({ family: '--family' });
  });

  it('turns an unknown flag or a missing value into a CliError', () => {
    expect(() => parseCommandOptions(['--famly', 'x'], options)).toThrow(CliError);
    expect(() => parseCommandOptions(['--family'], options)).toThrow(CliError);
    expect(() => parseCommandOptions(['stray'], options)).toThrow(CliError);
  });
});
