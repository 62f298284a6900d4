import { audiences, familyEventTypes, isEventOf, rejectsUntilOf, type FamilyEvent, type TokenIssued, type TokenRevoked, type TokenRotated } from '@tessera/events';
import { presentedMatches, type KeyedHash, type PresentedSecret } from './constant-time.js';
import type { Decider } from './decider.js';
import { DomainError, assertNever } from './errors.js';
import { narrowedScope } from './scope.js';

/**
 * A token family: one get-oauth-token exchange and every refresh after it (docs/interface.md, How tokens change state).
 * Pure: time, ids and hashes arrive on the command.
 */
export type FamilyState =
  | { readonly status: 'none' }
  | {
      readonly status: 'active';
      readonly familyId: string;
      readonly accountId: string;
      readonly credentialId: string;
      readonly apiLoginId: string;
      readonly generation: number;
      /** When the current generation was issued: a family last issued before its account was disabled is never refreshed. */
      readonly issuedAt: number;
      readonly refreshTokenHash: string;
      /** The fingerprint of the secret-hashing key `refreshTokenHash` was made with; undefined: the log's first key. */
      readonly hashingKey: string | undefined;
      readonly accessExpiresAt: number;
      /**
       * The last expiry among the access tokens of every generation so far. Not always the
       * current one's: the TTL can go down between generations, and issuers' clocks differ.
       */
      readonly lastAccessExpiresAt: number;
      readonly refreshExpiresAt: number;
      /** The OAuth 2.0 `scope` the family was made for, which its tokens stay within; undefined: the account's permissions. */
      readonly requestedScope: readonly string[] | undefined;
      /** The RFC 8707 audience its tokens carry; undefined: the default (`tessera:v5`). */
      readonly audience: string | undefined;
      /** The thumbprint of the DPoP key the family is bound to; undefined: a bearer family. */
      readonly jkt: string | undefined;
      /**
       * The hashes of the refresh tokens this family's rotations used up, oldest first, each with
       * its key. Known only when every event was folded: a state evolved from a TokenRotated alone
       * cannot tell a used token from one never issued, and leaves this undefined (docs/decisions/0010).
       */
      readonly usedRefreshTokens: readonly KeyedHash[] | undefined;
    }
  | {
      readonly status: 'revoked';
      readonly familyId: string;
      readonly accountId: string;
      readonly generation: number;
      readonly accessExpiresAt: number;
      readonly lastAccessExpiresAt: number;
    };

export const initialFamilyState = (): FamilyState => ({ status: 'none' });

/** The audience of a family made without an RFC 8707 `resource`: the current interface's. */
const defaultAudience = audiences.v5;

/**
 * What a used refresh token presented again does (TESSERA_REFRESH_REUSE). `keep`: nothing, as
 * the interface says. `revoke-family`: the family is revoked, so a thief's newer pair dies too
 * (RFC 9700 section 4.14.2). Either way the refresh is refused.
 */
export type RefreshReusePolicy = 'keep' | 'revoke-family';

export interface Lifetimes {
  readonly accessTokenSeconds: number;
  readonly refreshTokenSeconds: number;
}

export type FamilyCommand =
  | {
      readonly type: 'IssueToken';
      readonly familyId: string;
      readonly accountId: string;
      readonly credentialId: string;
      readonly apiLoginId: string;
      readonly refreshTokenHash: string;
      /** The fingerprint of the secret-hashing key `refreshTokenHash` was made with. */
      readonly hashingKey: string;
      readonly jti: string;
      readonly scope: readonly string[];
      /** The OAuth 2.0 `scope` asked for, already within the account's permissions (`scope` is then the same). */
      readonly requestedScope?: readonly string[] | undefined;
      /** The RFC 8707 `resource` asked for, already one of the account's audiences. */
      readonly audience?: string | undefined;
      /** The thumbprint of the key of the DPoP proof the family was asked for with: it is bound to that key. */
      readonly jkt?: string | undefined;
      readonly now: number;
      readonly lifetimes: Lifetimes;
    }
  | {
      readonly type: 'RotateToken';
      readonly presentedRefreshToken: PresentedSecret;
      readonly newRefreshTokenHash: string;
      /** The fingerprint of the key `newRefreshTokenHash` was made with. */
      readonly hashingKey: string;
      readonly jti: string;
      /** The account's permissions now, within the family's requested scope: a refresh picks up permission changes. */
      readonly scope: readonly string[];
      /** An OAuth 2.0 refresh's `scope`: the new access token's, which must lie within `scope` (RFC 6749 section 6). */
      readonly askedScope?: readonly string[] | undefined;
      /** An OAuth 2.0 refresh's authenticated client: the family must have been issued to it. */
      readonly clientId?: string | undefined;
      /** An OAuth 2.0 refresh's RFC 8707 `resource`: it must be the family's audience. */
      readonly askedAudience?: string | undefined;
      /**
       * The thumbprint of the key of the refresh's DPoP proof, checked; undefined: no proof (the v5
       * route takes none). A DPoP-bound family refreshes only with a proof of its own key.
       */
      readonly proofJkt?: string | undefined;
      readonly now: number;
      readonly lifetimes: Lifetimes;
      readonly refreshReuse: RefreshReusePolicy;
    }
  | {
      readonly type: 'RevokeToken';
      readonly presentedRefreshToken: PresentedSecret;
      /** An OAuth 2.0 revocation's authenticated client: the family must have been issued to it (RFC 7009 section 2.1). */
      readonly clientId?: string | undefined;
      readonly now: number;
    }
  | {
      /**
       * An operator's revocation (admin API), or a client's revocation of one of its access tokens
       * (OAuth 2.0, with `clientId`): no refresh token needed, and revoking a revoked family changes nothing.
       */
      readonly type: 'RevokeFamily';
      readonly clientId?: string | undefined;
      readonly now: number;
    };

/**
 * Family events are fat, so a state is built from the last event alone: each event carries what
 * the next decision needs, `rejectsUntil` included. The one exception is the list of used refresh
 * tokens, which only a fold of every event knows (reuse detection reads the whole stream).
 */
export function evolveFamily(state: FamilyState, event: FamilyEvent): FamilyState {
  switch (event.type) {
    case 'TokenIssued':
    case 'TokenRotated':
      return {
        usedRefreshTokens: usedAfter(state, event),
        status: 'active',
        familyId: event.familyId,
        accountId: event.accountId,
        credentialId: event.credentialId,
        apiLoginId: event.apiLoginId,
        generation: event.generation,
        issuedAt: event.issuedAt,
        refreshTokenHash: event.refreshTokenHash,
        hashingKey: event.hashingKey,
        accessExpiresAt: event.accessExpiresAt,
        lastAccessExpiresAt: event.type === 'TokenIssued' ? event.accessExpiresAt : Math.max(event.accessExpiresAt, rejectsUntilOf(event)),
        refreshExpiresAt: event.refreshExpiresAt,
        requestedScope: event.requestedScope,
        audience: event.audience,
        jkt: event.jkt,
      };
    case 'TokenRevoked':
      return {
        status: 'revoked',
        familyId: event.familyId,
        accountId: event.accountId,
        generation: event.generation,
        accessExpiresAt: event.accessExpiresAt,
        lastAccessExpiresAt: rejectsUntilOf(event),
      };
    default:
      return assertNever(event);
  }
}

/** A family starts with no used token; a rotation adds the token it used, if the earlier ones are known. */
function usedAfter(state: FamilyState, event: TokenIssued | TokenRotated): readonly KeyedHash[] | undefined {
  if (event.type === 'TokenIssued') return [];
  if (state.status !== 'active' || state.usedRefreshTokens === undefined) return undefined;
  return [...state.usedRefreshTokens, { hash: state.refreshTokenHash, hashingKey: state.hashingKey }];
}

export function decideFamily(command: FamilyCommand, state: FamilyState): FamilyEvent[] {
  switch (command.type) {
    case 'IssueToken':
      return [issue(command, state)];
    case 'RotateToken':
      return [rotate(command, state)];
    case 'RevokeToken':
      return [revoke(command, state)];
    case 'RevokeFamily':
      return revokeByOperator(command, state);
    default:
      return assertNever(command);
  }
}

function issue(command: Extract<FamilyCommand, { type: 'IssueToken' }>, state: FamilyState): TokenIssued {
  if (state.status !== 'none') throw new DomainError('ERR_FAMILY_EXISTS', 'token family already exists');
  return {
    type: 'TokenIssued',
    v: 1,
    familyId: command.familyId,
    accountId: command.accountId,
    credentialId: command.credentialId,
    apiLoginId: command.apiLoginId,
    generation: 0,
    refreshTokenHash: command.refreshTokenHash,
    hashingKey: command.hashingKey,
    jti: command.jti,
    scope: [...command.scope],
    ...(command.requestedScope === undefined ? {} : { requestedScope: [...command.requestedScope] }),
    ...(command.audience === undefined ? {} : { audience: command.audience }),
    ...(command.jkt === undefined ? {} : { jkt: command.jkt }),
    issuedAt: command.now,
    accessExpiresAt: command.now + command.lifetimes.accessTokenSeconds,
    refreshExpiresAt: command.now + command.lifetimes.refreshTokenSeconds,
  };
}

/** The checks refresh and revoke share (the refresh token's last state row): only a valid refresh token moves a family. */
function requireValidRefreshToken(state: FamilyState, presented: PresentedSecret, now: number) {
  switch (state.status) {
    case 'none':
      throw new DomainError('ERR_REFRESH_TOKEN_INVALID', 'refresh token is invalid');
    case 'revoked':
      throw new DomainError('ERR_REFRESH_TOKEN_REVOKED', 'refresh token was revoked');
    case 'active':
      // Hash before expiry, so a guessed token learns nothing about the family's times.
      if (!presentedMatches({ hash: state.refreshTokenHash, hashingKey: state.hashingKey }, presented)) {
        throw new DomainError('ERR_REFRESH_TOKEN_USED', 'refresh token was already used or is invalid');
      }
      if (now >= state.refreshExpiresAt) throw new DomainError('ERR_REFRESH_TOKEN_EXPIRED', 'refresh token has expired');
      return state;
    default:
      return assertNever(state);
  }
}

function rotate(command: Extract<FamilyCommand, { type: 'RotateToken' }>, state: FamilyState): TokenRotated | TokenRevoked {
  if (command.refreshReuse === 'revoke-family' && wasUsed(state, command.presentedRefreshToken)) {
    return revokedFamily(state, command.now, 'refresh-token-reused');
  }
  const current = requireValidRefreshToken(state, command.presentedRefreshToken, command.now);
  // Only once the token is proven current: a guessed token learns nothing of the family's client or scope.
  requireIssuedTo(current, command.clientId);
  if (command.askedAudience !== undefined && command.askedAudience !== (current.audience ?? defaultAudience)) {
    throw new DomainError('ERR_INVALID_TARGET', "the resource is not the refresh token's audience");
  }
  // RFC 9449 section 5: a bound refresh token is presented with a proof of its key, or it is not taken.
  if (current.jkt !== undefined && command.proofJkt !== current.jkt) {
    throw new DomainError('ERR_DPOP_KEY_MISMATCH', command.proofJkt === undefined ? 'the refresh token is DPoP-bound: present it at the token endpoint with a DPoP proof of its key' : "the DPoP proof is not signed by the refresh token's key");
  }
  const scope = command.askedScope === undefined ? command.scope : narrowedScope(command.askedScope, command.scope, "the refresh token's");
  return {
    type: 'TokenRotated',
    v: 1,
    familyId: current.familyId,
    accountId: current.accountId,
    credentialId: current.credentialId,
    apiLoginId: current.apiLoginId,
    generation: current.generation + 1,
    refreshTokenHash: command.newRefreshTokenHash,
    hashingKey: command.hashingKey,
    jti: command.jti,
    scope: [...scope],
    // A family keeps the scope it was made for through every rotation.
    ...(current.requestedScope === undefined ? {} : { requestedScope: [...current.requestedScope] }),
    ...(current.audience === undefined ? {} : { audience: current.audience }),
    ...(current.jkt === undefined ? {} : { jkt: current.jkt }),
    issuedAt: command.now,
    accessExpiresAt: command.now + command.lifetimes.accessTokenSeconds,
    refreshExpiresAt: command.now + command.lifetimes.refreshTokenSeconds,
    // Every earlier generation is now invalid; the last of their tokens expires at this time.
    rejectsUntil: current.lastAccessExpiresAt,
  };
}

/**
 * A used token of this family, not merely one that is not current: the family id is public (the
 * `fid` claim), so a token never issued must not end a family. Unknown history is no proof.
 */
function wasUsed(state: FamilyState, presented: PresentedSecret): state is Extract<FamilyState, { status: 'active' }> {
  return state.status === 'active' && (state.usedRefreshTokens ?? []).some((used) => presentedMatches(used, presented));
}

function revoke(command: Extract<FamilyCommand, { type: 'RevokeToken' }>, state: FamilyState): TokenRevoked {
  const current = requireValidRefreshToken(state, command.presentedRefreshToken, command.now);
  requireIssuedTo(current, command.clientId);
  return revokedFamily(current, command.now);
}

/** An OAuth 2.0 client acts only on its own families (RFC 6749 section 6, RFC 7009 section 2.1). */
function requireIssuedTo(current: Extract<FamilyState, { status: 'active' }>, clientId: string | undefined): void {
  if (clientId !== undefined && clientId !== current.apiLoginId) {
    throw new DomainError('ERR_REFRESH_TOKEN_OTHER_CLIENT', 'the token was issued to another client');
  }
}

/**
 * No `reason` on the event: TokenRevoked's reason is an enum that readers before this one check, so a
 * new value would make them drop the revocation. Who revoked it is in the event's metadata (decision 0011).
 */
function revokeByOperator(command: Extract<FamilyCommand, { type: 'RevokeFamily' }>, state: FamilyState): TokenRevoked[] {
  switch (state.status) {
    case 'none':
      throw new DomainError('ERR_FAMILY_NOT_FOUND', 'no such token family');
    case 'revoked':
      return [];
    case 'active':
      requireIssuedTo(state, command.clientId);
      return [revokedFamily(state, command.now)];
    default:
      return assertNever(state);
  }
}

function revokedFamily(current: Extract<FamilyState, { status: 'active' }>, now: number, reason?: TokenRevoked['reason']): TokenRevoked {
  return {
    type: 'TokenRevoked',
    v: 1,
    familyId: current.familyId,
    accountId: current.accountId,
    generation: current.generation,
    revokedAt: now,
    accessExpiresAt: current.accessExpiresAt,
    rejectsUntil: current.lastAccessExpiresAt,
    ...(reason === undefined ? {} : { reason }),
  };
}

/**
 * Events are fat: the command handler may evolve the initial state with a family's last event
 * alone, unless the decision needs the used tokens (a refresh under `revoke-family` that failed so).
 */
export const familyDecider: Decider<FamilyCommand, FamilyState, FamilyEvent> = {
  isEvent: (event) => isEventOf(familyEventTypes, event),
  decide: decideFamily,
  evolve: evolveFamily,
  initialState: initialFamilyState,
};
