/**
 * Characters a name (an account's, an admin token's) must not hold, because a terminal acts on them
 * when `accounts list`, `admin-tokens list` or an audit prints the name: control characters (C0, DEL,
 * C1: escape sequences, line breaks), bidi overrides and isolates (which reorder what is shown), line
 * and paragraph separators. Joiners (U+200C, U+200D) stay allowed: several scripts need them.
 */
export const unsafeNameCharacter = /[\p{Cc}\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;
