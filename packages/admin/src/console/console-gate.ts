import type { FastifyRequest } from 'fastify';
import type { AdminTokenDirectory, AuthenticatedAdmin } from '@tessera/admin-tokens';
import { consoleSessionCookie, type ConsoleSession, type ConsoleSessions } from './console-session.js';

/** The header the console's script sends each change's synchronizer token in. */
export const csrfHeader = 'x-tessera-csrf';

/** What checks a console session: the signature, then the admin token it names, on every request. */
export interface ConsoleSessionGate {
  readonly sessions: ConsoleSessions;
  readonly tokens: Pick<AdminTokenDirectory, 'active'>;
}

export type SessionCheck =
  | { readonly admin: AuthenticatedAdmin; readonly session: ConsoleSession }
  | { readonly status: 401 | 403; readonly detail: string };

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A request's console session, checked as the admin guard checks a bearer token: undefined when it
 * carries no session cookie. The admin token the session names is looked up on every request, so
 * revoking it (or its expiry) ends every session at once. A change (any method but GET, HEAD and
 * OPTIONS) also needs the session's synchronizer token in X-Tessera-CSRF and a same-origin request
 * (Sec-Fetch-Site, else Origin): the cookie alone, which a browser attaches to anything, changes nothing.
 */
export function checkSession(request: FastifyRequest, gate: ConsoleSessionGate): SessionCheck | undefined {
  const cookie = cookieOf(request.headers.cookie, consoleSessionCookie);
  if (cookie === undefined) return undefined;
  const session = gate.sessions.verify(cookie);
  if (!session) return { status: 401, detail: 'the console session is invalid or over: sign in again' };
  const admin = gate.tokens.active(session.adminTokenId);
  if (!admin) return { status: 401, detail: "the console session's admin token is revoked or expired: sign in again" };
  if (!safeMethods.has(request.method)) {
    if (!sameOrigin(request)) return { status: 403, detail: 'a change from the console must come from its own origin' };
    const presented = request.headers[csrfHeader];
    if (!gate.sessions.csrfMatches(session, typeof presented === 'string' ? presented : undefined)) {
      return { status: 403, detail: `a change from the console needs the session's CSRF token in ${csrfHeader}` };
    }
  }
  return { admin: { id: admin.id, name: admin.name, scopes: admin.scopes }, session };
}

/**
 * Whether the browser says the request comes from the console's own origin: Sec-Fetch-Site when it
 * sends one (every current browser does), else Origin against the Host the request was sent to.
 * Neither (not a browser, or a very old one) is refused: such a client uses a bearer token.
 */
export function sameOrigin(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (typeof site === 'string') return site === 'same-origin';
  const origin = request.headers.origin;
  const host = request.headers.host;
  return typeof origin === 'string' && host !== undefined && origin === `https://${host}`;
}

/** One cookie's value from a Cookie header; undefined when absent or given twice (which one is ours is then unclear). */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  const found = header
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair.startsWith(`${name}=`))
    .map((pair) => pair.slice(name.length + 1));
  return found.length === 1 && found[0] !== '' ? found[0] : undefined;
}
