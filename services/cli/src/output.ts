/** Human text by default, one JSON object with --json: scripts parse the latter. */
export function print(json: boolean, value: unknown, human: string): void {
  process.stdout.write(json ? `${jsonText(value)}\n` : `${human}\n`);
}

/**
 * What a terminal would act on rather than show: control characters (C0, DEL, C1), bidi overrides
 * and isolates, line and paragraph separators. New names with these are refused, but an
 * older log can hold them, and a printed name must not clear the screen or fake a line.
 */
const unsafeCharacter = /[\p{Cc}\u202a-\u202e\u2066-\u2069\u2028\u2029]/gu;

/**
 * A value from the log, for human text: each unsafe character as `\xNN` (up to U+00FF) or
 * `\uNNNN`. A backslash is left as typed, so names stay readable; --json is the exact form.
 */
export function shown(value: string): string {
  return value.replace(unsafeCharacter, (character) => {
    const code = character.codePointAt(0)!;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * JSON.stringify escapes C0 characters but writes C1 characters, bidi controls and U+2028/U+2029
 * as they are. Escaping them as `\uNNNN` too keeps the text valid JSON of the same value.
 */
export function jsonText(value: unknown): string {
  return JSON.stringify(value).replace(unsafeCharacter, (character) => `\\u${character.codePointAt(0)!.toString(16).padStart(4, '0')}`);
}
