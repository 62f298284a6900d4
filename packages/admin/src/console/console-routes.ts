import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AdminTokenDirectory } from '@tessera/admin-tokens';
import { problemResponses, problemTypes, sendProblem } from '@tessera/http';
import { consoleAsset, consolePage } from './console-assets.js';
import { checkSession, csrfHeader, sameOrigin, type ConsoleSessionGate } from './console-gate.js';
import { consoleSessionCookie, consoleSessionSeconds, type ConsoleSession } from './console-session.js';

export interface ConsoleRoutesOptions extends ConsoleSessionGate {
  readonly tokens: Pick<AdminTokenDirectory, 'active' | 'authenticate'>;
  /** Epoch seconds. */
  readonly now: () => number;
}

/**
 * The page's own files only: no inline script or style, no other origin, no framing, forms posting
 * back here alone. Every console answer carries it, errors included.
 */
export const consoleContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'";

const SessionAnswer = z.object({
  admin_token_id: z.string(),
  name: z.string(),
  scopes: z.array(z.string()),
  expires_at: z.string().describe('When the session ends: 8 hours after sign-in, or the admin token\'s expiry if sooner'),
  csrf_token: z.string().describe(`Send it in ${csrfHeader} with every change`),
});
const tags = ['console'];
const clearedCookie = `${consoleSessionCookie}=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Strict`;

/**
 * The admin console (docs/console.md), on the admin listener only: its page and files, and its
 * sessions. Sign-in exchanges an admin token for a signed session cookie that names the token by id;
 * the page then calls the admin API itself with that cookie, which the admin guard checks as it
 * checks a bearer token, with the token's scopes.
 */
export async function consoleRoutes(app: FastifyInstance, options: ConsoleRoutesOptions): Promise<void> {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  // This plugin's routes only (fastify scopes a hook to the plugin that adds it).
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('content-security-policy', consoleContentSecurityPolicy);
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('cross-origin-opener-policy', 'same-origin');
    return payload;
  });

  routes.get('/console/', { schema: { summary: 'The admin console: its one page (HTML); it signs in with an admin token', tags, response: { 200: z.string().describe('text/html: the page'), ...problemResponses(503) } } }, async (_request, reply) => {
    const page = await consolePage();
    if (page === undefined) {
      return sendProblem(reply, { type: problemTypes.unavailable, title: 'Service Unavailable', status: 503, detail: "the console's script is not built in this installation (npm run build compiles it)" });
    }
    return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page.toString('utf8'));
  });

  routes.get(
    '/console/assets/:file',
    { schema: { summary: "The console's script and style, served from the package: no other origin", tags, params: z.object({ file: z.string().regex(/^[a-z-]{1,64}\.(js|css)$/) }), response: { 200: z.string().describe('text/javascript or text/css'), ...problemResponses(404, 503) } } },
    async (request, reply) => {
      const asset = await consoleAsset(request.params.file);
      if (asset === undefined) return sendProblem(reply, { type: problemTypes.notFound, title: 'Not Found', status: 404, detail: `no console file ${request.params.file}` });
      return reply.header('cache-control', 'no-cache').type(asset.contentType).send(asset.body.toString('utf8'));
    },
  );

  routes.post(
    '/console/session',
    {
      schema: {
        summary: 'Sign in: an admin token for a session cookie (HttpOnly, Secure, SameSite=Strict); the token is never in the cookie',
        tags,
        body: z.strictObject({ admin_token: z.string().min(1).max(512) }),
        response: { 200: SessionAnswer, ...problemResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      // A sign-in from another site would put the browser in that site's chosen session (login CSRF).
      if (!sameOrigin(request)) return forbidden(reply, 'sign-in must come from the console page itself');
      const signedIn = options.tokens.authenticate(request.body.admin_token);
      const admin = signedIn && options.tokens.active(signedIn.id);
      if (!admin) return sendProblem(reply, { type: problemTypes.invalidToken, title: 'Unauthorized', status: 401, detail: 'the admin token is unknown, revoked or expired' });
      const now = options.now();
      const expiresAt = Math.min(now + consoleSessionSeconds, admin.expiresAt ?? Number.MAX_SAFE_INTEGER);
      const { cookie, session } = options.sessions.sign(admin.id, expiresAt);
      request.log.info({ adminTokenId: admin.id }, 'console sign-in');
      reply.header('set-cookie', `${consoleSessionCookie}=${cookie}; Path=/; Max-Age=${expiresAt - now}; HttpOnly; Secure; SameSite=Strict`);
      return noStore(reply).send(sessionAnswer(admin, session, options));
    },
  );

  routes.get(
    '/console/session',
    { schema: { summary: "The signed-in session: its admin token's id, name and scopes, its end, and its CSRF token", tags, response: { 200: SessionAnswer, ...problemResponses(401) } } },
    async (request, reply) => {
      const checked = checkSession(request, options);
      if (!checked) return signedOut(reply, 'not signed in');
      if ('status' in checked) {
        // A session that is over (or never was) is cleared: the page says why once, then starts afresh.
        reply.header('set-cookie', clearedCookie);
        return signedOut(reply, checked.detail);
      }
      return noStore(reply).send(sessionAnswer(checked.admin, checked.session, options));
    },
  );

  routes.delete(
    '/console/session',
    { schema: { summary: 'Sign out: the session cookie is cleared (a change: it needs the CSRF token)', tags, response: { 204: z.null(), ...problemResponses(403) } } },
    async (request, reply) => {
      const checked = checkSession(request, options);
      // A live session is ended only by its own page (the CSRF token); a dead one is cleared whoever asks.
      if (checked && 'status' in checked && checked.status === 403) return forbidden(reply, checked.detail);
      reply.header('set-cookie', clearedCookie);
      return noStore(reply).code(204).send();
    },
  );
}

function sessionAnswer(admin: { readonly id: string; readonly name: string; readonly scopes: ReadonlySet<string> }, session: ConsoleSession, options: ConsoleRoutesOptions): z.infer<typeof SessionAnswer> {
  return {
    admin_token_id: admin.id,
    name: admin.name,
    scopes: [...admin.scopes].sort(),
    expires_at: new Date(session.expiresAt * 1000).toISOString(),
    csrf_token: options.sessions.csrfTokenOf(session),
  };
}

function forbidden(reply: FastifyReply, detail: string): FastifyReply {
  return sendProblem(reply, { type: problemTypes.forbidden, title: 'Forbidden', status: 403, detail });
}

function signedOut(reply: FastifyReply, detail: string): FastifyReply {
  return sendProblem(reply, { type: problemTypes.invalidToken, title: 'Unauthorized', status: 401, detail });
}

function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store');
}
