import type { FastifyInstance } from 'fastify';

/**
 * Every answer (errors included) tells browsers to use HTTPS only, for a year and on subdomains
 * (Keycloak's default), and not to guess content types. Set when the request arrives, so a
 * refusal from any later hook or handler carries them too.
 */
export const securityHeaders = {
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
} as const;

export function addSecurityHeaders(app: FastifyInstance): void {
  // A callback hook, not an async one: it runs on every request, forward-auth's hot path included.
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(securityHeaders);
    done();
  });
}
