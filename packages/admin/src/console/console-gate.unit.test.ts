import { describe, expect, it } from 'vitest';
import { cookieOf } from './console-gate.js';

describe('cookieOf', () => {
  const name = '__Host-tessera-console';

  it('finds the one cookie of that name among others, whatever the spacing', () => {
    expect(cookieOf(`theme=dark; ${name}=abc.def;other=1`, name)).toBe('abc.def');
    expect(cookieOf(`${name}=abc.def`, name)).toBe('abc.def');
  });

  it('finds none when absent, empty, or only a name that merely starts the same', () => {
    expect(cookieOf(undefined, name)).toBeUndefined();
    expect(cookieOf('theme=dark', name)).toBeUndefined();
    expect(cookieOf(`${name}=`, name)).toBeUndefined();
    expect(cookieOf(`${name}-old=abc`, name)).toBeUndefined();
  });

  it('takes none when the name comes twice: which one this server set cannot be told', () => {
    expect(cookieOf(`${name}=abc; ${name}=def`, name)).toBeUndefined();
  });
});
