import {
  audiences,
  streams,
  type AccessTokenClaims,
  type ClientPublicJwk,
  type EventMetadata,
  type FamilyEvent,
  type LegacyTokenIssued,
  type TokenIssued,
  type TokenRevoked,
  type TokenRotated,
} from '@tessera/events';
import {
  DomainError,
  familyDecider,
  familyScope,
  narrowedScope,
  sameKeyedHash,
  type AccountProfile,
  type ActiveCredential,
  type CredentialDirectory,
  type DomainErrorCode,
  type FamilyCommand,
  type FamilyState,
  type Lifetimes,
  type PresentedSecret,
  type RefreshReusePolicy,
} from '@tessera/domain';
import { handleCommand, type EventStore } from '@tessera/event-store';
import {
  familyOfRefreshToken,
  newFamilyId,
  newJti,
  newRefreshToken,
  signAccessToken,
  type SecretHashers,
  type SigningKey,
} from '@tessera/tokens';
import { inSpanSync, tracerOf } from '@tessera/tracing';
import type { AuthenticationFailure } from './authentication-failures.js';
import { checkWithKeysAt, type ClientKeySource } from './client-key-source.js';
import { IssuerRefusal, refreshRefusal } from './issuer-errors.js';
import type { SigningKeyring } from './signing-keyring.js';

export interface TokenServiceDeps {
  readonly store: EventStore;
  readonly directory: CredentialDirectory;
  readonly keyring: SigningKeyring;
  /** New hashes under the log's current secret-hashing key; presented secrets under the key their stored hash names. */
  readonly hashers: SecretHashers;
  readonly issuer: string;
  readonly lifetimes: Lifetimes & { readonly legacyTokenSeconds: number };
  /** Epoch seconds. */
  readonly now: () => number;
  /** Called with each family event once durable and before the answer: same-process read-your-writes. */
  readonly onFamilyEvent?: (event: FamilyEvent) => void;
  /** What a used refresh token presented again does (TESSERA_REFRESH_REUSE); `keep`, the interface's rule, when absent. */
  readonly refreshReuse?: RefreshReusePolicy;
  /** This issuer's region (none: one region): new families are homed here, their ids prefixed with it. */
  readonly region?: string | undefined;
  /** Told of each refused credential exchange, for the audit trail's per-minute counts. */
  readonly onAuthenticationFailure?: (failure: AuthenticationFailure) => void;
  /**
   * True for a family of this region that another region revoked while this one was out of its
   * reach (docs/decisions/0018): its refresh is refused from the moment the revocation arrives.
   */
  readonly isRevokedElsewhere?: (familyId: string) => boolean;
  /** Fetches the keys of a client whose account registered a JWKS URL (`--jwks-url`); none: such a client cannot authenticate by assertion. */
  readonly clientKeySource?: ClientKeySource;
}

/** A client whose credentials checked out: who a token will be issued to. */
export interface AuthenticatedClient {
  readonly apiLoginId: string;
  readonly accountId: string;
  readonly credentialId: string;
  /** The account's permissions now. */
  readonly permissions: readonly string[];
  /** The RFC 8707 audiences the account's tokens may be issued for. */
  readonly audiences: readonly string[];
  /** RFC 9449 section 5.2: the account takes DPoP-bound tokens only, so a token request without a proof is refused. */
  readonly dpopBoundAccessTokens: boolean;
}

/** How a family is made or moved by the OAuth 2.0 door rather than the spec's v5 routes. */
export interface GrantOptions {
  /** The `iss` of the access token: the OAuth 2.0 door's is TESSERA_PUBLIC_URL (docs/oauth.md). Default TESSERA_ISSUER. */
  readonly issuer?: string | undefined;
  /** An OAuth 2.0 `scope`: within the account's permissions (and, on a refresh, the family's), else ERR_INVALID_SCOPE. */
  readonly scope?: readonly string[] | undefined;
  /** On a refresh: the client the refresh token must have been issued to, else ERR_REFRESH_TOKEN_OTHER_CLIENT. */
  readonly clientId?: string | undefined;
  /** RFC 8707 `resource`: one of the account's audiences, the tokens' `aud` (on a refresh, the family's); else ERR_INVALID_TARGET. */
  readonly resource?: string | undefined;
  /**
   * RFC 9449: the thumbprint of the key of the DPoP proof sent with the request, already checked. A
   * new family is bound to it; a bound family refreshes only with it (else ERR_DPOP_KEY_MISMATCH);
   * a bearer family's refreshed access token is bound to it, the family not.
   */
  readonly dpopJkt?: string | undefined;
}

export interface IssuedPair {
  readonly issuedAt: number;
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly expiresAt: number;
  /** The access token's scope. */
  readonly scope: readonly string[];
  /** The thumbprint of the DPoP key the access token is bound to (its `cnf.jkt`); undefined: a bearer token. */
  readonly jkt?: string | undefined;
}

export interface LegacyToken {
  readonly authenticationToken: string;
  readonly expiresInSeconds: number;
}

/**
 * The issuer's operations as named steps (authenticate → handle the family command: read,
 * decide, take the key, append → sign), so a stack trace says where a request failed. No HTTP here.
 */
/**
 * Spans of the steps a token operation takes in this process (docs/operations.md, "Tracing"): the
 * client's credential check, the family's decision (for a refresh or a revocation, the check of the
 * presented refresh token), and the signing. Attributes name what was done and with which key,
 * never a secret, a token or a hash.
 */
const tracer = tracerOf('@tessera/issuer');

/** The family's rules, each decision in a span of its own. */
const tracedFamilyDecider: typeof familyDecider = {
  ...familyDecider,
  decide: (command, state) => inSpanSync(tracer, 'tessera.family.decide', { attributes: { 'tessera.command': command.type } }, () => familyDecider.decide(command, state)),
};

/** What the OAuth 2.0 door knows of an authenticated client: its account as it is now. */
function clientOf(apiLoginId: string, credentialId: string, account: AccountProfile): AuthenticatedClient {
  return {
    apiLoginId,
    accountId: account.accountId,
    credentialId,
    permissions: account.permissions,
    audiences: account.audiences ?? [],
    dpopBoundAccessTokens: account.dpopBoundAccessTokens === true,
  };
}

/** An access token signed, in a span naming the key. */
function signInSpan(claims: AccessTokenClaims, key: SigningKey): string {
  return inSpanSync(tracer, 'tessera.token.sign', { attributes: { 'tessera.signing_key.kid': key.kid } }, () => signAccessToken(claims, key));
}

export function createTokenService(deps: TokenServiceDeps) {
  const { store, directory, keyring, hashers } = deps;
  const refreshReuse = deps.refreshReuse ?? 'keep';
  // Hash and compare even for an unknown login, so timing does not tell which logins exist.
  const absentSecretHash = 'A'.repeat(43);

  /** The presented secret hashed under the key its stored hash names, or under any key for an unknown id. */
  function presentedHash(credential: ActiveCredential | undefined, secret: string): string {
    return credential ? hashers.hashUnder(credential.hashingKey, secret) : hashers.decoy(secret);
  }

  /** A refresh token as the family decider compares it: hashed under whichever key made the hash it meets. */
  const presentedRefreshToken = (refreshToken: string): PresentedSecret => (hashingKey) => hashers.hashUnder(hashingKey, refreshToken);

  function refused(tokenInterface: AuthenticationFailure['interface'], known: AuthenticationFailure['known'] | undefined): void {
    deps.onAuthenticationFailure?.({ interface: tokenInterface, ...(known ? { known } : {}) });
  }

  function authenticateClient(apiLoginId: string, transactionKey: string) {
    return inSpanSync(tracer, 'tessera.client.authenticate', { attributes: { 'tessera.interface': 'v5' } }, () => checkClient(apiLoginId, transactionKey));
  }

  function checkClient(apiLoginId: string, transactionKey: string) {
    const credential = directory.apiCredential(apiLoginId);
    const matches = sameKeyedHash(credential?.secretHash ?? absentSecretHash, presentedHash(credential, transactionKey));
    const account = credential && directory.account(credential.accountId);
    if (!credential || !matches || !account) {
      refused('v5', credential && { accountId: credential.accountId, credentialId: credential.credentialId, clientId: apiLoginId });
      throw new IssuerRefusal('ERR_INVALID_CLIENT', 'invalid API Login ID or Transaction Key');
    }
    return { credential, account };
  }

  /**
   * Taken before the append, not after: with no key the request fails (503) having changed
   * nothing, rather than consuming a refresh token whose successor could not be signed. A key
   * retired during the append still verifies: retired keys stay in the JWKS until their tokens expire.
   */
  function signingKeyBeforeAppend(): SigningKey {
    return keyring.current();
  }

  /**
   * A family's one event per command, through the command handler: its last event is its state.
   * `beforeAppend` runs once the command is decided and before anything is written (taking the
   * signing key); its result comes back with the event. A conflict means another refresh or
   * revoke of this family committed first: this token is no longer current. The refusals of the
   * domain become the issuer's.
   */
  async function handleFamilyCommand<E extends FamilyEvent, K>(
    familyId: string,
    command: (state: FamilyState) => FamilyCommand,
    metadata: EventMetadata,
    steps: {
      readonly newStream?: boolean;
      /** The last event (the default) holds what a decision needs, except the used tokens (see refreshToken). */
      readonly read?: 'last-event' | 'stream';
      readonly conflictRetries?: number;
      readonly beforeAppend: (event: E) => K;
    },
  ): Promise<{ event: E; taken: K }> {
    let taken: { value: K } | undefined;
    try {
      const { events } = await handleCommand(store, {
        stream: streams.family(familyId),
        decider: tracedFamilyDecider,
        command,
        read: steps.read ?? 'last-event',
        newStream: steps.newStream,
        metadata: (event) => ({ ...metadata, accountId: event.accountId }),
        beforeAppend: (events) => {
          // Cast: decideFamily answers the caller's command with one event, of the type E it names.
          taken = { value: steps.beforeAppend(events[0] as E) };
        },
        onConflict: { retries: steps.conflictRetries, answer: () => new DomainError('ERR_REFRESH_TOKEN_USED', 'refresh token was already used or revoked') },
      });
      // decideFamily answers one event or throws, and beforeAppend ran before that event was appended.
      const event = events[0] as E;
      deps.onFamilyEvent?.(event);
      return { event, taken: taken!.value };
    } catch (error) {
      if (error instanceof DomainError && isRefreshTokenCode(error.code)) throw refreshRefusal(error.code);
      if (error instanceof DomainError && (error.code === 'ERR_INVALID_SCOPE' || error.code === 'ERR_INVALID_TARGET' || error.code === 'ERR_DPOP_KEY_MISMATCH')) throw new IssuerRefusal(error.code, error.message);
      throw error;
    }
  }

  /**
   * When a new token for this account and client id is issued: now, or the `notBefore` of a cut made
   * in this same second if that is later (up to a second ahead; token-cut.ts in the domain). Without
   * it, a client that gets a new token right after `--revoke-tokens` would get one already refused.
   */
  function issueTime(accountId: string, clientId: string): number {
    return Math.max(deps.now(), directory.tokensValidFrom(accountId, clientId));
  }

  // ---- Refresh-token reuse (TESSERA_REFRESH_REUSE, RFC 9700 section 4.14.2, docs/decisions/0010) ----

  /**
   * A refresh: the family command, with a second look at a refused token under `revoke-family`.
   * The first look reads the last event alone, as every command does, so a current token costs
   * no more than under `keep`. Only a token refused as used (or one that lost a race to another
   * refresh of it) is looked at again with the whole stream, which alone knows the used tokens:
   * a used one revokes the family, and the answer is still a refusal.
   */
  async function rotateFamily(
    familyId: string,
    command: (state: FamilyState) => FamilyCommand,
    metadata: EventMetadata,
  ): Promise<{ event: TokenRotated; taken: SigningKey }> {
    const look = (read: 'last-event' | 'stream') =>
      handleFamilyCommand<TokenRotated | TokenRevoked, SigningKey | undefined>(familyId, command, metadata, {
        read,
        // A writer that commits between the whole read and the append: read and decide again.
        conflictRetries: read === 'stream' ? 3 : 0,
        // A revocation signs nothing: it needs no key.
        beforeAppend: (event) => (event.type === 'TokenRotated' ? signingKeyBeforeAppend() : undefined),
      });
    const { event, taken } = await look('last-event').catch((error: unknown) => {
      if (refreshReuse === 'revoke-family' && error instanceof IssuerRefusal && error.code === 'ERR_REFRESH_TOKEN_USED') return look('stream');
      throw error;
    });
    if (event.type === 'TokenRevoked') throw new IssuerRefusal('ERR_REFRESH_TOKEN_REUSED', 'refresh token was already used or is invalid');
    // beforeAppend took a key for the rotation.
    return { event, taken: taken! };
  }

  // ---- end of refresh-token reuse ----

  function signFamilyToken(event: TokenIssued | TokenRotated, key: SigningKey, issuer = deps.issuer, jkt = event.jkt): string {
    const claims: AccessTokenClaims = {
      iss: issuer,
      sub: event.accountId,
      aud: event.audience ?? audiences.v5,
      client_id: event.apiLoginId,
      iat: event.issuedAt,
      exp: event.accessExpiresAt,
      jti: event.jti,
      scope: event.scope.join(' '),
      fid: event.familyId,
      gen: event.generation,
      ...(jkt === undefined ? {} : { cnf: { jkt } }),
    };
    return signInSpan(claims, key);
  }

  function authenticate(apiLoginId: string, transactionKey: string): AuthenticatedClient {
    const { credential, account } = authenticateClient(apiLoginId, transactionKey);
    return clientOf(apiLoginId, credential.credentialId, account);
  }

  /**
   * private_key_jwt: the client an assertion names, once `check` has verified the assertion with
   * the public keys the account registered. The client is found by its API Login ID as for a
   * secret, so a revoked credential authenticates by neither; an account without keys cannot
   * authenticate by assertion. A refusal counts as a failed authentication, as a wrong secret does.
   */
  async function authenticateByAssertion(apiLoginId: string, check: (keys: readonly ClientPublicJwk[]) => Promise<void>): Promise<AuthenticatedClient> {
    const credential = directory.apiCredential(apiLoginId);
    const account = credential && directory.account(credential.accountId);
    const known = credential && { accountId: credential.accountId, credentialId: credential.credentialId, clientId: apiLoginId };
    const keys = account?.clientKeys ?? [];
    // Keys at a URL (--jwks-url) need a source to fetch them; a process without one has no keys for the client.
    const uri = deps.clientKeySource && account?.clientKeysUri;
    if (!credential || !account || (keys.length === 0 && !uri)) {
      refused('v5', known);
      throw new IssuerRefusal('ERR_INVALID_CLIENT', 'unknown client, or a client with no keys registered for private_key_jwt');
    }
    try {
      await (uri && deps.clientKeySource ? checkWithKeysAt(deps.clientKeySource, account.accountId, uri, check) : check(keys));
    } catch (error) {
      if (error instanceof IssuerRefusal) refused('v5', known);
      throw error;
    }
    return clientOf(apiLoginId, credential.credentialId, account);
  }

  async function issueFamily(client: AuthenticatedClient, metadata: EventMetadata, options: GrantOptions = {}): Promise<IssuedPair> {
    const requestedScope = options.scope === undefined ? undefined : narrowedScope(options.scope, client.permissions, "the client's permissions");
    if (options.resource !== undefined && !client.audiences.includes(options.resource)) {
      throw new IssuerRefusal('ERR_INVALID_TARGET', 'the resource is not one of the audiences the client may ask for');
    }
    const scope = requestedScope ?? client.permissions;
    const familyId = newFamilyId(deps.region);
    const refreshToken = newRefreshToken(familyId);
    const hasher = hashers.current();
    const { event, taken: key } = await handleFamilyCommand<TokenIssued, SigningKey>(
      familyId,
      () => ({
        type: 'IssueToken',
        familyId,
        accountId: client.accountId,
        credentialId: client.credentialId,
        apiLoginId: client.apiLoginId,
        refreshTokenHash: hasher.hash(refreshToken),
        hashingKey: hasher.fingerprint,
        jti: newJti(),
        scope,
        requestedScope,
        audience: options.resource,
        jkt: options.dpopJkt,
        now: issueTime(client.accountId, client.apiLoginId),
        lifetimes: deps.lifetimes,
      }),
      metadata,
      // A fresh random family id: nothing to read.
      { newStream: true, beforeAppend: signingKeyBeforeAppend },
    );
    return { issuedAt: event.issuedAt, accessToken: signFamilyToken(event, key, options.issuer), refreshToken, expiresAt: event.accessExpiresAt, scope: event.scope, jkt: event.jkt };
  }

  return {
    /** Spec 4.1. */
    async getToken(apiLoginId: string, transactionKey: string, metadata: EventMetadata): Promise<IssuedPair> {
      return issueFamily(authenticate(apiLoginId, transactionKey), metadata);
    },

    /** A client's credentials checked (the Transaction Key against its keyed hash), or ERR_INVALID_CLIENT. */
    authenticate,

    authenticateByAssertion,

    /** A new family for a client authenticated by `authenticate` (OAuth 2.0 client_credentials). */
    issueFamily,

    /** Spec 4.2: the expected revision makes two refreshes of one token race to exactly one winner. */
    async refreshToken(refreshToken: string, metadata: EventMetadata, options: GrantOptions = {}): Promise<IssuedPair> {
      const familyId = familyOfRefreshToken(refreshToken);
      if (!familyId) throw refreshRefusal('ERR_REFRESH_TOKEN_INVALID');
      // Revoked is terminal, wherever it was recorded: checked before anything is read, as at home.
      if (deps.isRevokedElsewhere?.(familyId)) throw refreshRefusal('ERR_REFRESH_TOKEN_REVOKED');
      const nextRefreshToken = newRefreshToken(familyId);
      const { event, taken: key } = await rotateFamily(
        familyId,
        (state) => {
          if (state.status === 'active' && !directory.isApiCredentialActive(state.apiLoginId, state.credentialId)) {
            throw refreshRefusal('ERR_CREDENTIAL_REVOKED');
          }
          // A family the account's disable ended (revoked at home, or homed in a region that only heard of it).
          if (state.status === 'active' && !directory.survivedDisables(state.accountId, state.issuedAt)) throw refreshRefusal('ERR_REFRESH_TOKEN_REVOKED');
          const hasher = hashers.current();
          return {
            type: 'RotateToken',
            presentedRefreshToken: presentedRefreshToken(refreshToken),
            newRefreshTokenHash: hasher.hash(nextRefreshToken),
            hashingKey: hasher.fingerprint,
            jti: newJti(),
            // The account's permissions now (a refresh picks up permission changes), within what the family was made for.
            scope: state.status === 'active' ? familyScope(directory.account(state.accountId)?.permissions ?? [], state.requestedScope) : [],
            // RFC 6749 section 6: the client must be the one the token was issued to, and may narrow the scope.
            askedScope: options.scope,
            clientId: options.clientId,
            askedAudience: options.resource,
            proofJkt: options.dpopJkt,
            now: state.status === 'active' ? issueTime(state.accountId, state.apiLoginId) : deps.now(),
            lifetimes: deps.lifetimes,
            refreshReuse,
          };
        },
        metadata,
      );
      // A bound family's tokens carry its key; a bearer family's refreshed with a proof, the proof's (RFC 9449 section 5).
      const jkt = event.jkt ?? options.dpopJkt;
      return {
        issuedAt: event.issuedAt,
        accessToken: signFamilyToken(event, key, options.issuer, jkt),
        refreshToken: nextRefreshToken,
        expiresAt: event.accessExpiresAt,
        scope: event.scope,
        jkt,
      };
    },

    /** Spec 4.3; with `clientId`, an OAuth 2.0 client's revocation of its own refresh token (RFC 7009). */
    async revokeToken(refreshToken: string, metadata: EventMetadata, options: Pick<GrantOptions, 'clientId'> = {}): Promise<{ revokedAt: number }> {
      const familyId = familyOfRefreshToken(refreshToken);
      if (!familyId) throw refreshRefusal('ERR_REFRESH_TOKEN_INVALID');
      const { event } = await handleFamilyCommand<TokenRevoked, void>(
        familyId,
        () => ({ type: 'RevokeToken', presentedRefreshToken: presentedRefreshToken(refreshToken), clientId: options.clientId, now: deps.now() }),
        metadata,
        // Nothing is signed: no key needed.
        { beforeAppend: () => undefined },
      );
      return { revokedAt: event.revokedAt };
    },

    /**
     * An OAuth 2.0 client's revocation of one of its access tokens (RFC 7009): the token's family,
     * with no refresh token. Revoking a revoked family changes nothing; another client's family is
     * ERR_REFRESH_TOKEN_OTHER_CLIENT, an unknown one ERR_FAMILY_NOT_FOUND.
     */
    async revokeFamily(familyId: string, clientId: string, metadata: EventMetadata): Promise<void> {
      try {
        const { events } = await handleCommand(store, {
          stream: streams.family(familyId),
          decider: tracedFamilyDecider,
          command: (): FamilyCommand => ({ type: 'RevokeFamily', clientId, now: deps.now() }),
          read: 'last-event',
          metadata: (event) => ({ ...metadata, accountId: event.accountId }),
          // A refresh that commits first changes nothing about whether the family may be revoked: decide again.
          onConflict: { retries: 3 },
        });
        for (const event of events) deps.onFamilyEvent?.(event);
      } catch (error) {
        if (error instanceof DomainError && error.code === 'ERR_REFRESH_TOKEN_OTHER_CLIENT') throw refreshRefusal(error.code);
        throw error;
      }
    },

    /** A family's state as its last event says, for introspection (RFC 7662): no lock, no write. */
    async familyState(familyId: string): Promise<FamilyState> {
      const [last] = await store.readStream(streams.family(familyId), { direction: 'backwards', maxCount: 1 });
      return last && familyDecider.isEvent(last.event) ? familyDecider.evolve(familyDecider.initialState(), last.event) : familyDecider.initialState();
    },

    /** Whether a presented refresh token is the family's current one: the hash compared in constant time under the key that made it. */
    isCurrentRefreshToken(state: Extract<FamilyState, { status: 'active' }>, refreshToken: string): boolean {
      return sameKeyedHash(state.refreshTokenHash, hashers.hashUnder(state.hashingKey, refreshToken));
    },

    /** Spec 4.5: the older interface. Its tokens carry their own audience. */
    async legacyAuthenticate(apiId: string, apiKey: string, metadata: EventMetadata): Promise<LegacyToken> {
      const { credential, account } = inSpanSync(tracer, 'tessera.client.authenticate', { attributes: { 'tessera.interface': 'v1' } }, () => {
        const credential = directory.legacyCredential(apiId);
        const matches = sameKeyedHash(credential?.secretHash ?? absentSecretHash, presentedHash(credential, apiKey));
        const account = credential && directory.account(credential.accountId);
        if (!credential || !matches || !account) {
          refused('v1', credential && { accountId: credential.accountId, credentialId: credential.credentialId, clientId: apiId });
          throw new IssuerRefusal('ERR_INVALID_CLIENT', 'invalid API ID or API Key');
        }
        return { credential, account };
      });
      const now = issueTime(account.accountId, apiId);
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
      return { authenticationToken: signInSpan(claims, key), expiresInSeconds: event.expiresAt - event.issuedAt };
    },
  };
}

export type TokenService = ReturnType<typeof createTokenService>;

/** What the spec's interfaces (v5 and v1) call: the OAuth 2.0 door uses the rest. */
export type InterfaceTokenOperations = Pick<TokenService, 'getToken' | 'refreshToken' | 'revokeToken' | 'legacyAuthenticate'>;

/** A requested scope, each permission in it granted, in the order asked and without repeats; else ERR_INVALID_SCOPE. */
/**
 * The domain's refusals of a refresh token, each also an issuer refusal (a new one fails to compile
 * until it is). ERR_REFRESH_TOKEN_UNPROVEN is no refusal: a region away from home could not tell, so
 * it stays a 503 and never becomes a 401.
 */
type RefreshTokenCode = Exclude<Extract<DomainErrorCode, `ERR_REFRESH_TOKEN_${string}`>, 'ERR_REFRESH_TOKEN_UNPROVEN'>;

function isRefreshTokenCode(code: DomainErrorCode): code is RefreshTokenCode {
  return code.startsWith('ERR_REFRESH_TOKEN_') && code !== 'ERR_REFRESH_TOKEN_UNPROVEN';
}
