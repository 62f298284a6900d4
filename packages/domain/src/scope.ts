import { DomainError } from './errors.js';

/**
 * A scope asked for, within the one allowed (RFC 6749 sections 3.3 and 6: a client may narrow a
 * scope, never widen it); each permission once. `allowedBy` names what bounds it, in the refusal.
 */
export function narrowedScope(asked: readonly string[], allowed: readonly string[], allowedBy: string): readonly string[] {
  const outside = asked.filter((permission) => !allowed.includes(permission));
  if (outside.length > 0) throw new DomainError('ERR_INVALID_SCOPE', `the scope is wider than ${allowedBy}: ${outside.join(' ')}`);
  return [...new Set(asked)];
}

/**
 * What a family grants now: the account's permissions as they are, within the scope the family
 * asked for when it was made (none asked: all of them). A permission taken from the account since
 * leaves the family's next token; one given back returns only if the family asked for it.
 */
export function familyScope(permissions: readonly string[], requestedScope: readonly string[] | undefined): readonly string[] {
  return requestedScope === undefined ? permissions : permissions.filter((permission) => requestedScope.includes(permission));
}
