import type { RequestStep } from '@tessera/http';

/**
 * Every answer (errors included) tells browsers to use HTTPS only, for a year and on subdomains
 * (Keycloak's default), and not to guess content types. Set when the request arrives, so a
 * refusal from any later hook or handler carries them too.
 */
export const securityHeaders = {
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
} as const;

/** A request step (the server runs its steps in one hook), early: a refusal by any later step, hook or handler carries them. */
export const addSecurityHeaders: RequestStep = (_request, reply) => {
  reply.headers(securityHeaders);
  return true;
};
