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
}
