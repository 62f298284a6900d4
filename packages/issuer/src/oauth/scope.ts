import { OAuthRequestRefused } from './oauth-errors.js';

/** RFC 6749 section 3.3: scope-tokens of printable ASCII but `"` and `\`, one space between them. */
const scopeSyntax = /^[\x21\x23-\x5b\x5d-\x7e]+(?: [\x21\x23-\x5b\x5d-\x7e]+)*$/;

/** The permissions a `scope` parameter names; undefined when it is absent or empty (then the account's, or the family's). */
export function scopeOf(scope: string | undefined): readonly string[] | undefined {
  if (scope === undefined || scope === '') return undefined;
  if (!scopeSyntax.test(scope)) throw new OAuthRequestRefused('ERR_OAUTH_REQUEST_INVALID', 'scope must be permissions separated by single spaces (RFC 6749 section 3.3)');
  return scope.split(' ');
}
