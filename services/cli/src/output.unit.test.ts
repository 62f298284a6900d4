import { describe, expect, it } from 'vitest';
import { jsonText, shown } from './output.js';

describe('shown: a value from the log, safe to print on a terminal', () => {
  it.each([
    ['an escape sequence', 'a\u001b[2Jb', 'a\\x1b[2Jb'],
    ['a NUL, a line break and a tab', '\u0000\n\t', '\\x00\\x0a\\x09'],
    ['a DEL and an 8-bit CSI', '\u007f\u009b', '\\x7f\\x9b'],
    ['bidi overrides and isolates', '\u202eabc\u2066', '\\u202eabc\\u2066'],
    ['line and paragraph separators', '\u2028\u2029', '\\u2028\\u2029'],
  ])('escapes %s', (_what, raw, printed) => {
    expect(shown(raw)).toBe(printed);
  });

  it('leaves printable text in any script alone', () => {
    expect(shown('Café ☕ می\u200cخواهم \\x1b')).toBe('Café ☕ می\u200cخواهم \\x1b');
  });
});

describe('jsonText: --json output', () => {
  it('escapes every control character as \\u, so it stays valid JSON that parses back to the same value', () => {
    const value = [{ name: 'a\u001b[2J\u009b\u202e\u2028z' }];
    const text = jsonText(value);
    expect(text).toBe('[{"name":"a\\u001b[2J\\u009b\\u202e\\u2028z"}]');
    expect(JSON.parse(text)).toEqual(value);
  });
});
