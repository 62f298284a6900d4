import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OAuthForward, OAuthForwarding } from '../forwarding.js';
import { noStore } from '../http-request.js';
import { sendOAuthError } from './oauth-errors.js';

/**
 * Offers an OAuth 2.0 request of a family to the region module, and sends what came of it in RFC
 * 6749's shape: true once answered, false when the family is homed here (or there are no regions).
 * A relayed answer is sent as home serialized it, with the headers the region module let through
 * (never home's DPoP-Nonce: the client's next proof is checked here, against this region's nonces).
 */
export async function answeredElsewhere(forwarding: OAuthForwarding | undefined, forward: OAuthForward, request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
  if (forwarding === undefined) return false;
  const outcome = await forwarding(forward, request);
  switch (outcome.kind) {
    case 'home':
      return false;
    case 'relayed':
      for (const [name, value] of Object.entries(outcome.headers)) reply.header(name, value);
      reply.code(outcome.status).send(outcome.body);
      return true;
    case 'unavailable':
      sendOAuthError(reply.header('retry-after', String(outcome.retryAfterSeconds)), 503, 'temporarily_unavailable', "the token's home region cannot be reached now; try again shortly");
      return true;
    case 'revoked-here':
      noStore(reply).send({});
      return true;
  }
}
