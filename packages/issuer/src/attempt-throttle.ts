import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { problemTypes, sendProblem } from '@tessera/http';
import type { AttemptLimiter, Budget, BudgetScope } from './attempt-limiter.js';
import { claimedClientId } from './oauth/client-authentication.js';
import { sendOAuthError } from './oauth/oauth-errors.js';

/** How many failures each budget allows per window; 0 turns that budget off. */
export interface FailureLimits {
  /** Per credential id (API Login ID or API ID) from one address, on get-oauth-token and /v1/authenticate. */
  readonly credential: number;
  /** Per address, whatever the credential, on get-oauth-token and /v1/authenticate together. */
  readonly address: number;
  /** Per address, on refresh-oauth-token and revoke-oauth-token together. */
  readonly refresh: number;
  /**
   * Per trusted proxy, on all four operations together: the connection's address when the
   * client's came from X-Forwarded-For (TESSERA_TRUSTED_PROXIES). A client inside a trusted range
   * can name a new address on every attempt; this bounds what that buys.
   */
  readonly proxy: number;
}

export type ThrottledOperation = 'issue' | 'legacy_issue' | 'refresh' | 'revoke' | 'introspect';

export interface AttemptThrottle {
  readonly limiter: AttemptLimiter;
  readonly limits: FailureLimits;
  /** Counts a 429 (tessera_throttled_total). */
  readonly onThrottled?: (operation: ThrottledOperation, scope: BudgetScope) => void;
  /**
   * Requests whose failures are charged to no budget: those an authenticated peer issuer
   * forwarded, already charged there to the client's address. They are still checked against the
   * budgets of the address they came from, so once wrong guesses of the peer secret have spent it,
   * the right secret is refused like a wrong one and the 429 tells a guesser nothing.
   */
  readonly uncharged?: (request: FastifyRequest) => boolean;
}

/** The credential id in a request body, cut short: it keys a budget, and a body may be 16 KiB. */
const credentialId = (body: unknown, field: string): string => String((body as Record<string, unknown> | undefined)?.[field] ?? '').slice(0, 128);

/** Which budgets each token operation spends, by route (and every one the proxy's: proxyBudgets). */
const operations: Record<string, { operation: ThrottledOperation; budgets: (request: FastifyRequest, limits: FailureLimits) => Budget[] }> = {
  '/v5/Authorization/get-oauth-token': { operation: 'issue', budgets: (request, limits) => loginBudgets(request, limits, `v5:${credentialId(request.body, 'api_login_id')}`) },
  '/v1/authenticate': { operation: 'legacy_issue', budgets: (request, limits) => loginBudgets(request, limits, `v1:${credentialId(request.body, 'apiid')}`) },
  '/v5/Authorization/refresh-oauth-token': { operation: 'refresh', budgets: (request, limits) => refreshBudgets(request, limits) },
  '/v5/Authorization/revoke-oauth-token': { operation: 'revoke', budgets: (request, limits) => refreshBudgets(request, limits) },
  // The OAuth 2.0 endpoints authenticate a client first, on every grant: a wrong secret is a login failure.
  '/oauth2/token': { operation: 'issue', budgets: (request, limits) => loginBudgets(request, limits, `v5:${claimedClientId(request).slice(0, 128)}`) },
  '/oauth2/introspect': { operation: 'introspect', budgets: (request, limits) => loginBudgets(request, limits, `v5:${claimedClientId(request).slice(0, 128)}`) },
  '/oauth2/revoke': { operation: 'revoke', budgets: (request, limits) => loginBudgets(request, limits, `v5:${claimedClientId(request).slice(0, 128)}`) },
};

function loginBudgets(request: FastifyRequest, limits: FailureLimits, credential: string): Budget[] {
  const budgets: Budget[] = [];
  if (limits.credential > 0) budgets.push({ key: `login:credential:${credential}|${request.ip}`, scope: 'credential', limit: limits.credential });
  if (limits.address > 0) budgets.push({ key: `login:address:${request.ip}`, scope: 'address', limit: limits.address });
  return budgets;
}

/** A refresh token names its own family and is 256 bits: only the address is worth a budget. */
function refreshBudgets(request: FastifyRequest, limits: FailureLimits): Budget[] {
  return limits.refresh > 0 ? [{ key: `refresh:address:${request.ip}`, scope: 'address', limit: limits.refresh }] : [];
}

/**
 * The aggregate budget of the hop a request came through, when its client's address was read from
 * X-Forwarded-For (request.ip differs from the connection's address). Keyed by the connection's
 * address, which the client cannot choose, never by an address in the header, which it can.
 */
function proxyBudgets(request: FastifyRequest, limits: FailureLimits): Budget[] {
  const hop = request.socket.remoteAddress;
  if (limits.proxy <= 0 || hop === undefined || hop === request.ip) return [];
  return [{ key: `proxy:${hop}`, scope: 'proxy', limit: limits.proxy }];
}

/**
 * Throttles failed token operations, on the app (an encapsulated context) that holds the token
 * routes. Before the handler: a spent budget answers 429 with Retry-After, whatever the
 * credentials (a right key after many wrong ones from that address is refused too; that is the
 * point). Once the answer is known: a 401 charges every budget; a 200 forgives the
 * credential-and-address budget, as Keycloak resets a user's failure count on a good login. The
 * address budgets are never forgiven, so one valid account does not buy an attacker more guesses
 * at others. Successes are never counted: a rightful client on another address is never throttled.
 */
export function throttleFailedAttempts(app: FastifyInstance, throttle: AttemptThrottle): void {
  const charged = new WeakMap<FastifyRequest, Budget[]>();
  // After validation, so the credential id is in the body; a malformed request is a 400 and spends nothing.
  app.addHook('preHandler', async (request, reply) => {
    const route = operations[request.routeOptions.url ?? ''];
    if (!route) return;
    const budgets = [...route.budgets(request, throttle.limits), ...proxyBudgets(request, throttle.limits)];
    if (budgets.length === 0) return;
    const throttled = await throttle.limiter.check(budgets);
    if (throttled) {
      throttle.onThrottled?.(route.operation, throttled.scope);
      request.log.info({ throttled: throttled.scope }, 'token request throttled');
      return tooManyFailures(reply, throttled.scope, throttled.retryAfterSeconds, request.routeOptions.url?.startsWith('/oauth2/') === true);
    }
    if (!throttle.uncharged?.(request)) charged.set(request, budgets);
  });
  // onSend, not onResponse: the failure is charged before the client reads its 401 and tries again.
  app.addHook('onSend', async (request, reply, payload) => {
    const budgets = charged.get(request);
    if (!budgets) return payload;
    if (reply.statusCode === 401) await throttle.limiter.recordFailure(budgets);
    else if (reply.statusCode === 200) await throttle.limiter.reset(budgets.filter((budget) => budget.scope === 'credential'));
    return payload;
  });
}

function tooManyFailures(reply: FastifyReply, scope: BudgetScope, retryAfterSeconds: number, oauth: boolean): FastifyReply {
  const whose = { credential: 'with this credential from this address', address: 'from this address', proxy: 'through this proxy' }[scope];
  // The OAuth 2.0 endpoints answer in RFC 6749's shape, a 429 included.
  if (oauth) return sendOAuthError(reply.code(429).header('retry-after', String(retryAfterSeconds)), 429, 'temporarily_unavailable', `too many failed attempts ${whose}; try again in ${retryAfterSeconds} s`);
  return sendProblem(reply.header('retry-after', String(retryAfterSeconds)), {
    type: problemTypes.tooManyRequests,
    title: 'Too Many Requests',
    status: 429,
    detail: `too many failed attempts ${whose}; try again in ${retryAfterSeconds} s`,
  });
}
