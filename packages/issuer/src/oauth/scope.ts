/**
 * The permissions a `scope` parameter names; undefined when it is absent or empty (then the
 * account's, or the family's). Its syntax was checked by the request schema (`scopeSyntax`).
 */
export function scopeOf(scope: string | undefined): readonly string[] | undefined {
  return scope === undefined || scope === '' ? undefined : scope.split(' ');
}
