import { isEventOf, sharedSignalsEventTypes, type TesseraEvent } from '@tessera/events';
import { assertNever } from '@tessera/domain';

/**
 * "Who could call as this account at instant t?", answered by replaying the
 * account's events up to t — never from current state, which forgets rotated and expired tokens.
 * Pure: no I/O, no clock; the instant is passed in. Times are epoch seconds, the resolution of the
 * tokens' own `iat` and `exp`, and each event counts from its own time (the issuer's clock, the
 * one that also wrote the tokens' claims), so an event at second s has happened at s.
 *
 * The log's events are first reduced to access events: what each one says about which access
 * tokens exist and which are cut off. Adding a kind of event that cuts tokens is one case in
 * `accessEventOf` (and, for a new kind of cut, one case in `evolve`).
 */
export type AccessEvent =
  /** TokenIssued (generation 0) or TokenRotated: a new access token; every older generation of the family is replaced. */
  | {
      readonly kind: 'generation-issued';
      readonly familyId: string;
      readonly generation: number;
      readonly credentialId: string;
      readonly issuedAt: number;
      readonly expiresAt: number;
    }
  /** TokenRevoked: every generation of the family is dead from `revokedAt` on. */
  | { readonly kind: 'family-revoked'; readonly familyId: string; readonly revokedAt: number }
  /** LegacyTokenIssued: a v1 token, which has no family and is never replaced. */
  | {
      readonly kind: 'legacy-token-issued';
      readonly jti: string;
      readonly credentialId: string;
      readonly issuedAt: number;
      readonly expiresAt: number;
    }
  /**
   * A not-before cut, as Keycloak pushes one: from `at` on, every token of the account (or, with
   * `credentialId`, of that credential), v5 or v1, issued before `notBefore` is dead:
   * AccountTokensRevoked and CredentialTokensRevoked.
   */
  | { readonly kind: 'tokens-cut'; readonly credentialId?: string; readonly notBefore: number; readonly at: number };

/**
 * What an event of the log says about access tokens, if anything. The switch names every event
 * type, so a new one does not compile until someone decides whether it issues or cuts tokens.
 */
export function accessEventOf(event: TesseraEvent): AccessEvent | undefined {
  // The Shared Signals transmitter's receivers and streams say who is told, not which tokens live.
  if (isEventOf(sharedSignalsEventTypes, event)) return undefined;
  switch (event.type) {
    case 'TokenIssued':
    case 'TokenRotated':
      return {
        kind: 'generation-issued',
        familyId: event.familyId,
        generation: event.generation,
        credentialId: event.credentialId,
        issuedAt: event.issuedAt,
        expiresAt: event.accessExpiresAt,
      };
    case 'TokenRevoked':
      return { kind: 'family-revoked', familyId: event.familyId, revokedAt: event.revokedAt };
    case 'LegacyTokenIssued':
      return { kind: 'legacy-token-issued', jti: event.jti, credentialId: event.credentialId, issuedAt: event.issuedAt, expiresAt: event.expiresAt };
    // An operator's cut (admin revoke-tokens, or --revoke-tokens on the CLI): decision 0011.
    case 'AccountTokensRevoked':
      return { kind: 'tokens-cut', notBefore: event.notBefore, at: event.at };
    case 'CredentialTokensRevoked':
      return { kind: 'tokens-cut', credentialId: event.credentialId, notBefore: event.notBefore, at: event.at };
    // Revoking a credential or changing permissions without a cut refuses new tokens only; a
    // disable comes with a cut of its own (the AccountTokensRevoked above), an enable refuses nothing.
    case 'AccountDisabled':
    case 'AccountEnabled':
    case 'AccountRegistered':
    case 'ApiCredentialIssued':
    case 'ApiCredentialRevoked':
    case 'LegacyCredentialIssued':
    case 'LegacyCredentialRevoked':
    case 'PermissionsChanged':
    case 'AccountAudiencesSet':
    case 'ClientKeysSet':
    case 'ClientDpopSet':
    case 'SigningKeyPublished':
    case 'SigningKeyRetired':
    case 'AuthenticationFailuresCounted':
    case 'AdminTokenIssued':
    case 'AdminTokenRevoked':
    case 'SecretHashingKeyRecorded':
    case 'SecretHashingKeyRotated':
    case 'ArchiveKeyTrusted':
    case 'ArchiveHeadRecorded':
    case 'ControlRegionChanged':
      return undefined;
    // Another region's revocation, kept for this region's Shared Signals receivers: the tokens it
    // ends were issued there, and that region's own trail answers for them.
    case 'RevocationMirrored':
      return undefined;
    default:
      return newerThanThisReader(event);
  }
}

/** Compile time: every event type is named above. Run time: a type from a newer writer says nothing here. */
const newerThanThisReader = (_event: never): undefined => undefined;

/** When an access event takes effect, in epoch seconds. */
export function effectiveAt(event: AccessEvent): number {
  switch (event.kind) {
    case 'generation-issued':
    case 'legacy-token-issued':
      return event.issuedAt;
    case 'family-revoked':
      return event.revokedAt;
    case 'tokens-cut':
      return event.at;
    default:
      return assertNever(event);
  }
}

/**
 * Where a read model finds an access event again, and when it can matter. A family's events are
 * found by family id; any other is a grant of its own (a v1 token, a cut). `span`: the seconds
 * during which it can bear on whether a token is usable, so that a read model can skip the grants
 * that cannot matter at an instant (a family's span grows with each generation; a revocation adds
 * nothing). A cut matters from its own time on, for good.
 */
export type Grant =
  | { readonly kind: 'family'; readonly familyId: string; readonly span?: Span }
  | { readonly kind: 'single'; readonly span: Span };
export interface Span {
  readonly from: number;
  readonly until: number;
}

export function grantOf(event: AccessEvent): Grant {
  switch (event.kind) {
    case 'generation-issued':
      return { kind: 'family', familyId: event.familyId, span: { from: event.issuedAt, until: event.expiresAt } };
    case 'family-revoked':
      return { kind: 'family', familyId: event.familyId };
    case 'legacy-token-issued':
      return { kind: 'single', span: { from: event.issuedAt, until: event.expiresAt } };
    case 'tokens-cut':
      return { kind: 'single', span: { from: event.at, until: Number.MAX_SAFE_INTEGER } };
    default:
      return assertNever(event);
  }
}

export interface UsableFamily {
  readonly familyId: string;
  readonly generation: number;
  readonly credentialId: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
}

export interface UsableLegacyToken {
  readonly jti: string;
  readonly credentialId: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
}

export interface AccessAt {
  /** Families whose current access token was usable, oldest token first. */
  readonly families: readonly UsableFamily[];
  readonly legacyTokens: readonly UsableLegacyToken[];
}

interface Replay {
  readonly families: Map<string, { current: UsableFamily; revoked: boolean }>;
  readonly legacyTokens: UsableLegacyToken[];
  readonly cuts: Extract<AccessEvent, { kind: 'tokens-cut' }>[];
}

/**
 * Every access token of the account that was usable at `at` (epoch seconds): issued at or before
 * it, expiring after it, not replaced by a newer generation, not revoked, not cut. `events` are
 * the account's access events in log order; those later than `at` are ignored, so any suffix of
 * history may be passed too.
 */
export function accessAt(events: Iterable<AccessEvent>, at: number): AccessAt {
  const replay: Replay = { families: new Map(), legacyTokens: [], cuts: [] };
  for (const event of events) if (effectiveAt(event) <= at) evolve(replay, event);
  const usable = (token: { issuedAt: number; expiresAt: number; credentialId: string }) =>
    token.issuedAt <= at && at < token.expiresAt && !replay.cuts.some((cut) => cuts(cut, token));
  const families = [...replay.families.values()].filter((family) => !family.revoked && usable(family.current)).map((family) => family.current);
  return {
    families: families.sort((a, b) => a.issuedAt - b.issuedAt || compare(a.familyId, b.familyId)),
    legacyTokens: replay.legacyTokens.filter(usable).sort((a, b) => a.issuedAt - b.issuedAt || compare(a.jti, b.jti)),
  };
}

/** Folds one access event into the replay (local state of accessAt, so mutated in place). */
function evolve(replay: Replay, event: AccessEvent): void {
  switch (event.kind) {
    case 'generation-issued': {
      const known = replay.families.get(event.familyId);
      const current = { familyId: event.familyId, generation: event.generation, credentialId: event.credentialId, issuedAt: event.issuedAt, expiresAt: event.expiresAt };
      // A rotation replaces every older generation; a duplicate or older one delivered late changes nothing.
      if (known === undefined) replay.families.set(event.familyId, { current, revoked: false });
      else if (event.generation > known.current.generation) known.current = current;
      return;
    }
    case 'family-revoked': {
      const known = replay.families.get(event.familyId);
      if (known) known.revoked = true;
      return;
    }
    case 'legacy-token-issued':
      replay.legacyTokens.push({ jti: event.jti, credentialId: event.credentialId, issuedAt: event.issuedAt, expiresAt: event.expiresAt });
      return;
    case 'tokens-cut':
      replay.cuts.push(event);
      return;
    default:
      assertNever(event);
  }
}

/** A cut kills the tokens it covers that were issued before its not-before time. */
function cuts(cut: Extract<AccessEvent, { kind: 'tokens-cut' }>, token: { issuedAt: number; credentialId: string }): boolean {
  return token.issuedAt < cut.notBefore && (cut.credentialId === undefined || cut.credentialId === token.credentialId);
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
