import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * What the refresh and revoke routes ask first, when the process is one of several regions (the
 * region module makes it): answers the request when `refreshToken`'s family is homed elsewhere,
 * and says so: true once it has sent the answer, false when the family is homed here. A boolean,
 * not the reply: a reply is thenable, and awaiting one resolves to nothing once it is sent, which
 * read as "homed here" and ran this region's own token service on a request already answered.
 */
export type Forwarding = (refreshToken: string, request: FastifyRequest, reply: FastifyReply) => Promise<boolean>;

/** The link to other regions' issuers, as the region module builds it; without one, an issuer of one region. */
export interface PeerLink {
  /** The peer link's shared secret: forwarded requests are accepted only with it. */
  readonly secret: string | undefined;
  readonly forwarding: Forwarding | undefined;
  /** The OAuth 2.0 door's forwarding; undefined where forwarding is off. */
  readonly oauthForwarding?: OAuthForwarding | undefined;
}

/**
 * What the receiving region vouches for when it forwards an OAuth 2.0 request to a family's home
 * issuer (docs/decisions/0012 and 0025): it authenticated the client and checked any DPoP proof
 * against its own token endpoint, so the home issuer does neither again.
 */
export interface ForwardedClient {
  /** The authenticated client's API Login ID. */
  readonly clientId: string;
  /** The thumbprint of the key of the DPoP proof the receiving region checked; undefined: none was sent. */
  readonly dpopJkt?: string | undefined;
  /** The `iss` the tokens carry: the receiving region's OAuth issuer, the one its client discovered. */
  readonly issuer: string;
}

/** An OAuth 2.0 request (a refresh_token grant at /oauth2/token, or /oauth2/revoke) of a family that may be homed elsewhere. */
export interface OAuthForward {
  /** The family the presented token names (a refresh token's prefix, or an access token's verified `fid`). */
  readonly familyId: string;
  /** The presented refresh token, when it is one: what a revoke is decided from here while home is out of reach. */
  readonly refreshToken: string | undefined;
  /** The validated form fields to send on, and nothing else the client sent. */
  readonly form: Readonly<Record<string, string>>;
  readonly client: ForwardedClient & {
    /** The client's account, for a revoke decided here: the family must be that account's. Never sent. */
    readonly accountId: string;
  };
}

/**
 * What became of an OAuth 2.0 request offered to the region module: `home` (the family is homed here,
 * so this issuer answers), `relayed` (home answered: status, body and the headers the client may see),
 * `unavailable` (home is out of reach, and nothing was decided here), or `revoked-here` (a revoke
 * decided from the check material while home is out of reach). The issuer sends each in RFC 6749's
 * shape: the region module knows the peer link, the issuer knows the protocol.
 */
export type OAuthForwardOutcome =
  | { readonly kind: 'home' }
  | { readonly kind: 'relayed'; readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly body: string }
  | { readonly kind: 'unavailable'; readonly retryAfterSeconds: number }
  | { readonly kind: 'revoked-here' };

/** The OAuth 2.0 door's counterpart of `Forwarding`; the route (request.routeOptions.url) says which endpoint is asked. */
export type OAuthForwarding = (forward: OAuthForward, request: FastifyRequest) => Promise<OAuthForwardOutcome>;
