import {
  audiences,
  streams,
  type AccessTokenClaims,
  type EventMetadata,
  type FamilyEvent,
  type LegacyTokenIssued,
  type TokenIssued,
  type TokenRotated,
} from '@tessera/contracts';
import {
  DomainError,
  decideFamily,
  evolveFamily,
  initialFamilyState,
  sameKeyedHash,
  type CredentialDirectory,
  type FamilyCommand,
  type FamilyState,
  type Lifetimes,
} from '@tessera/domain';
import { ExpectedRevisionConflict, type EventStore, type ExpectedRevision } from '@tessera/event-store';
import {
  familyOfRefreshToken,
  newFamilyId,
  newJti,
  newRefreshToken,
  signAccessToken,
  type SecretHasher,
  type SigningKey,
} from '@tessera/tokens';
import { IssuerRefusal } from './issuer-errors.js';
import type { SigningKeyring } from './signing-keyring.js';

export interface TokenServiceDeps {
  readonly store: EventStore;
  readonly directory: CredentialDirectory;
  readonly keyring: SigningKeyring;
  readonly hasher: SecretHasher;
  readonly issuer: string;
  readonly lifetimes: Lifetimes & { readonly legacyTokenSeconds: number };
  /** Epoch seconds. */
  readonly now: () => number;
  /** Called with each family event once durable and before the answer: same-process read-your-writes. */
  readonly onFamilyEvent?: (event: FamilyEvent) => void;
}

export interface IssuedPair {
  readonly issuedAt: number;
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly expiresAt: number;
}

export interface LegacyToken {
  readonly authenticationToken: string;
  readonly expiresInSeconds: number;
}

/**
 * The issuer's operations as named steps (authenticate → decide → append → sign), so a
 * stack trace says where a request failed. No HTTP here.
 */
export function createTokenService(deps: TokenServiceDeps) {
  const { store, directory, keyring, hasher } = deps;
  // Hash something even for an unknown login, so timing does not tell which logins exist.
  const absentSecretHash = hasher.hash('absent');

  function authenticateClient(apiLoginId: string, transactionKey: string) {
    const credential = directory.apiCredential(apiLoginId);
    const presented = hasher.hash(transactionKey);
    const matches = sameKeyedHash(credential?.secretHash ?? absentSecretHash, presented);
    const account = credential && directory.account(credential.accountId);
    if (!credential || !matches || !account) throw new IssuerRefusal('ERR_INVALID_CLIENT', 'invalid API Login ID or Transaction Key');
    return { credential, account };
  }

  async function loadFamily(refreshToken: string): Promise<{ familyId: string; state: FamilyState; revision: ExpectedRevision }> {
    const familyId = familyOfRefreshToken(refreshToken);
    if (!familyId) throw new IssuerRefusal('ERR_REFRESH_TOKEN_INVALID', 'refresh token is invalid');
    const [last] = await store.readStream(streams.family(familyId), { direction: 'backwards', maxCount: 1 });
    if (!last) throw new IssuerRefusal('ERR_REFRESH_TOKEN_INVALID', 'refresh token is invalid');
    return { familyId, state: evolveFamily(initialFamilyState(), last.event as FamilyEvent), revision: last.revision };
  }

  /**
   * Taken before the append, not after: with no key the request fails (503) having changed
   * nothing, rather than consuming a refresh token whose successor could not be signed. A key
   * retired during the append still verifies: retired keys stay in the JWKS until their tokens expire.
   */
  function signingKeyBeforeAppend(): SigningKey {
    return keyring.current();
  }

  function decide(command: FamilyCommand, state: FamilyState): FamilyEvent {
    try {
      const [event] = decideFamily(command, state);
      return event!;
    } catch (error) {
      if (error instanceof DomainError && error.code.startsWith('ERR_REFRESH_TOKEN_')) {
        throw new IssuerRefusal(error.code as IssuerRefusal['code'], error.message);
      }
      throw error;
    }
  }

  async function appendFamilyEvent(event: FamilyEvent, expectedRevision: ExpectedRevision, metadata: EventMetadata) {
    try {
      await store.append(streams.family(event.familyId), [{ event, metadata: { ...metadata, accountId: event.accountId } }], { expectedRevision });
    } catch (error) {
      // Another refresh or revoke of this family committed first: this token is no longer current.
      if (error instanceof ExpectedRevisionConflict) throw new IssuerRefusal('ERR_REFRESH_TOKEN_USED', 'refresh token was already used or revoked');
      throw error;
    }
    deps.onFamilyEvent?.(event);
  }

  function signFamilyToken(event: TokenIssued | TokenRotated, key: SigningKey): string {
    const claims: AccessTokenClaims = {
      iss: deps.issuer,
      sub: event.accountId,
      aud: audiences.v5,
      client_id: event.apiLoginId,
      iat: event.issuedAt,
      exp: event.accessExpiresAt,
      jti: event.jti,
      scope: event.scope.join(' '),
      fid: event.familyId,
      gen: event.generation,
    };
    return signAccessToken(claims, key);
  }

  return {
    /** Spec 4.1. */
    async getToken(apiLoginId: string, transactionKey: string, metadata: EventMetadata): Promise<IssuedPair> {
      const { credential, account } = authenticateClient(apiLoginId, transactionKey);
      const familyId = newFamilyId();
      const refreshToken = newRefreshToken(familyId);
      const event = decide(
        {
          type: 'IssueToken',
          familyId,
          accountId: account.accountId,
          credentialId: credential.credentialId,
          apiLoginId,
          refreshTokenHash: hasher.hash(refreshToken),
          jti: newJti(),
          scope: account.permissions,
          now: deps.now(),
          lifetimes: deps.lifetimes,
        },
        initialFamilyState(),
      ) as TokenIssued;
      const key = signingKeyBeforeAppend();
      await appendFamilyEvent(event, 'no_stream', metadata);
      return { issuedAt: event.issuedAt, accessToken: signFamilyToken(event, key), refreshToken, expiresAt: event.accessExpiresAt };
    },

    /** Spec 4.2: the expected revision makes two refreshes of one token race to exactly one winner. */
    async refreshToken(refreshToken: string, metadata: EventMetadata): Promise<IssuedPair> {
      const { familyId, state, revision } = await loadFamily(refreshToken);
      if (state.status === 'active' && !directory.isApiCredentialActive(state.apiLoginId, state.credentialId)) {
        throw new IssuerRefusal('ERR_CREDENTIAL_REVOKED', 'the Transaction Key this token was issued for has been rotated');
      }
      const scope = state.status === 'active' ? (directory.account(state.accountId)?.permissions ?? []) : [];
      const nextRefreshToken = newRefreshToken(familyId);
      const event = decide(
        {
          type: 'RotateToken',
          presentedRefreshTokenHash: hasher.hash(refreshToken),
          newRefreshTokenHash: hasher.hash(nextRefreshToken),
          jti: newJti(),
          scope,
          now: deps.now(),
          lifetimes: deps.lifetimes,
        },
        state,
      ) as TokenRotated;
      const key = signingKeyBeforeAppend();
      await appendFamilyEvent(event, revision, metadata);
      return { issuedAt: event.issuedAt, accessToken: signFamilyToken(event, key), refreshToken: nextRefreshToken, expiresAt: event.accessExpiresAt };
    },

    /** Spec 4.3. */
    async revokeToken(refreshToken: string, metadata: EventMetadata): Promise<{ revokedAt: number }> {
      const { state, revision } = await loadFamily(refreshToken);
      const event = decide({ type: 'RevokeToken', presentedRefreshTokenHash: hasher.hash(refreshToken), now: deps.now() }, state);
      await appendFamilyEvent(event, revision, metadata);
      return { revokedAt: event.type === 'TokenRevoked' ? event.revokedAt : deps.now() };
    },

    /** Spec 4.5: the older interface. Its tokens carry their own audience. */
    async legacyAuthenticate(apiId: string, apiKey: string, metadata: EventMetadata): Promise<LegacyToken> {
      const credential = directory.legacyCredential(apiId);
      const matches = sameKeyedHash(credential?.secretHash ?? absentSecretHash, hasher.hash(apiKey));
      const account = credential && directory.account(credential.accountId);
      if (!credential || !matches || !account) throw new IssuerRefusal('ERR_INVALID_CLIENT', 'invalid API ID or API Key');
      const now = deps.now();
      const event: LegacyTokenIssued = {
        type: 'LegacyTokenIssued',
        v: 1,
        accountId: account.accountId,
        credentialId: credential.credentialId,
        apiId,
        jti: newJti(),
        issuedAt: now,
        expiresAt: now + deps.lifetimes.legacyTokenSeconds,
      };
      const key = signingKeyBeforeAppend();
      await store.append(streams.legacyTokens(account.accountId), [{ event, metadata: { ...metadata, accountId: account.accountId } }], {
        expectedRevision: 'any',
      });
      const claims: AccessTokenClaims = {
        iss: deps.issuer,
        sub: account.accountId,
        aud: audiences.v1,
        client_id: apiId,
        iat: event.issuedAt,
        exp: event.expiresAt,
        jti: event.jti,
        scope: account.permissions.join(' '),
      };
      return { authenticationToken: signAccessToken(claims, key), expiresInSeconds: event.expiresAt - event.issuedAt };
    },
  };
}

export type TokenService = ReturnType<typeof createTokenService>;
