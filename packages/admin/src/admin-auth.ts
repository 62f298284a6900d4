import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { AdminScope, Problem } from '@tessera/events';
import type { AdminTokenDirectory, AuthenticatedAdmin } from '@tessera/admin-tokens';
import { problemTypes } from '@tessera/http';
import { checkSession, type ConsoleSessionGate } from './console/console-gate.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The admin token an /admin/v1/* request presented, once authenticated. */
    adminToken?: AuthenticatedAdmin;
  }
}

/** Every route under it needs an admin token (docs/audit.md). */
export const adminPathPrefix = '/admin/v1/';

export interface AdminGuardDeps {
  /** Followed by the process with its other read models: until they have caught up, the app answers 503 anyway. */
  readonly tokens: Pick<AdminTokenDirectory, 'authenticate'>;
  /**
   * The console's sessions: a request without an Authorization header may carry a session cookie
   * instead, checked against the admin token it names, with the same scopes (docs/console.md).
   */
  readonly console?: ConsoleSessionGate | undefined;
}

export interface AdminGuard {
  /**
   * For each admin route (`onRequest` or `preHandler`): 401 without a usable admin token, 403 when
   * the token lacks `scope`. The token is then on `request.adminToken`.
   */
  requireScope(scope: AdminScope): onRequestAsyncHookHandler;
  /**
   * Registered once on the admin listener's app, before the routes: every request under /admin/v1/
   * needs a usable admin token, whatever route it reaches — one that forgot requireScope, or none
   * (an unknown path answers 401, not 404, to a caller without a token).
   */
  readonly plugin: (app: FastifyInstance) => Promise<void>;
}

const bearer = /^bearer +([^\s]+) *$/i;

/**
 * Admin tokens with scopes, RFC 6750 challenges and problem+json (docs/interface.md, Errors): no token is
 * `WWW-Authenticate: Bearer` alone; an unknown, revoked or expired one adds `error="invalid_token"`; a token
 * without the scope is 403 `error="insufficient_scope", scope="…"`.
 */
export function createAdminGuard(deps: AdminGuardDeps): AdminGuard {
  /** The request's admin token; undefined when a refusal was sent instead. */
  function authenticate(request: FastifyRequest, reply: FastifyReply): AuthenticatedAdmin | undefined {
    if (request.adminToken) return request.adminToken;
    const header = request.headers.authorization;
    if (header === undefined && deps.console) {
      const checked = checkSession(request, deps.console);
      if (checked && 'status' in checked) {
        if (checked.status === 401) refuse(reply, 401, 'Bearer', unauthorized(checked.detail));
        else refuse(reply, 403, undefined, { type: problemTypes.forbidden, title: 'Forbidden', status: 403, detail: checked.detail });
        return undefined;
      }
      if (checked) {
        request.adminToken = checked.admin;
        return checked.admin;
      }
    }
    const presented = header === undefined ? undefined : bearer.exec(header)?.[1];
    if (!presented) {
      refuse(reply, 401, 'Bearer', unauthorized('an admin token is required: Authorization: Bearer <admin_token>'));
      return undefined;
    }
    const admin = deps.tokens.authenticate(presented);
    if (!admin) {
      refuse(reply, 401, 'Bearer error="invalid_token"', unauthorized('the admin token is unknown, revoked or expired'));
      return undefined;
    }
    request.adminToken = admin;
    return admin;
  }

  return {
    requireScope(scope) {
      return async (request, reply) => {
        const admin = authenticate(request, reply);
        if (!admin) return reply;
        if (admin.scopes.has(scope)) return;
        return refuse(reply, 403, `Bearer error="insufficient_scope", scope="${scope}"`, {
          type: problemTypes.forbidden,
          title: 'Forbidden',
          status: 403,
          detail: `the admin token lacks the scope ${scope}`,
        });
      };
    },
    plugin: fp(
      async (app: FastifyInstance) => {
        app.decorateRequest('adminToken', undefined);
        // Unrouted requests are answered as they arrive, before this plugin's hook: the gate puts the
        // token check in front of their 404 and 405 too, so a caller without a usable token gets the
        // same 401 whatever the path, and learns nothing of which paths and methods exist.
        app.guardUnrouted(adminPathPrefix, (request, reply) => authenticate(request, reply) === undefined);
        app.addHook('onRequest', async (request, reply) => {
          // The route matched as well as the raw path: a percent-encoded path can reach a route its raw form does not name.
          if (!request.url.startsWith(adminPathPrefix) && !(request.routeOptions.url ?? '').startsWith(adminPathPrefix)) return;
          if (!authenticate(request, reply)) return reply;
        });
      },
      { name: '@tessera/admin-auth', fastify: '5.x' },
    ),
  };
}

const unauthorized = (detail: string): Problem => ({ type: problemTypes.invalidToken, title: 'Unauthorized', status: 401, detail });

/** sendProblem's shape, with the challenge this refusal needs (sendProblem always says invalid_token on a 401). */
function refuse(reply: FastifyReply, status: number, challenge: string | undefined, problem: Problem): FastifyReply {
  if (challenge !== undefined) reply.header('www-authenticate', challenge);
  return reply.code(status).header('content-type', 'application/problem+json').header('cache-control', 'no-store').send(problem);
}
