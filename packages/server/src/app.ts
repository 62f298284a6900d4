import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { DestinationStream, Logger } from 'pino';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { loggerOptions, type ListenerPorts, type Metrics, type Readiness } from '@tessera/host';
import { answerClientError, installErrorHandlers, parseJsonNamingPrototypeMembers, problemTypes, sendProblem, type RequestStep } from '@tessera/http';
import { logEachRequestOnce, type AccessLine } from './access-log.js';
import { answerFrameworkError } from './framework-errors.js';
import { LazyRequestLogger } from './lazy-request-logger.js';
import { countOutcomes } from './http-metrics.js';
import { builtInRouteSchemas, registerOpenApi } from './openapi.js';
import { capConnections } from './connection-caps.js';
import { addSecurityHeaders } from './security-headers.js';
import { believeOnlyForwardedAddresses } from './forwarded-client.js';
import { serverOptions, type TransportSettings } from './transport.js';
import { runServerSteps, type ResponseStep } from './request-steps.js';

/** Which interfaces one listener serves: both on the one port, or v5 and v1 apart (TESSERA_LEGACY_PORT). */
export interface Listener {
  readonly v5: boolean;
  readonly v1: boolean;
}

/**
 * A service's routes, registered on each listener's app. `steps` takes a service's own request
 * steps (the bearer check), run after the server's in its one onRequest hook.
 */
export type RouteRegistrar = (app: FastifyInstance, listener: Listener, steps: { push(step: RequestStep): unknown }) => Promise<void>;

export interface AppParts {
  readonly tls?: { cert: string; key: string };
  readonly logLevel: string;
  readonly logStream?: DestinationStream | undefined;
  readonly readiness: Readiness;
  /** The ports the process's listeners bound, for /readyz (none: an app that is only injected into). */
  readonly ports?: () => ListenerPorts;
  readonly metrics: Metrics;
  /** Each service's routes, registered in order. */
  readonly routes: readonly RouteRegistrar[];
  /** Which interfaces this listener serves. */
  readonly listener?: Listener;
  /** Timeouts and connection caps (none: Node's and Fastify's defaults, for inject() tests). */
  readonly transport?: TransportSettings;
}

export const bodyLimitBytes = 16 * 1024;

/** Builds the fastify app without listening, so tests can use inject() and main() can listen. */
export async function buildApp(parts: AppParts): Promise<FastifyInstance> {
  const logger = loggerOptions(parts.logLevel);
  // Made once the app exists (it writes on the app logger's stream); fastify calls the framework
  // error handler only for requests, which come after.
  const late: { accessLine?: AccessLine } = {};
  const app = Fastify({
    // TLS policy and timeouts: transport.ts.
    ...serverOptions(parts.tls, parts.transport),
    logger: parts.logStream ? { ...logger, stream: parts.logStream } : logger,
    bodyLimit: bodyLimitBytes,
    // access-log.ts writes one line per request instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // pino is fastify's logger: the parent here is a pino Logger.
    childLoggerFactory: (logger, bindings, options) => new LazyRequestLogger(logger as Logger, bindings, options),
    requestIdHeader: false,
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
    // What Node's parser refuses (unknown method, bad header, 431, 408) is problem+json too.
    clientErrorHandler: answerClientError,
    // And what fastify's router refuses before any hook runs (a bad percent-encoding, an over-long parameter).
    frameworkErrors: answerFrameworkError(() => late.accessLine),
  });
  // Transport hardening: connection caps, and headers on every answer.
  const { metrics } = parts;
  if (parts.transport) capConnections(app.server, parts.transport, (reason) => metrics.connectionsRefused.inc({ reason }));
  // The server's own steps on every request, run in one onRequest and one onResponse hook
  // (request-steps.ts), in this order.
  const onRequest: RequestStep[] = [];
  const onResponse: ResponseStep[] = [];
  if (parts.transport?.trustedProxies) onRequest.push(believeOnlyForwardedAddresses);
  onRequest.push(addSecurityHeaders);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandlers(app, onRequest);
  // JSON only by default (fastify also parses text/plain): anything else is a 415.
  app.removeContentTypeParser('text/plain');
  // A body with a prototype member stays refused, and the 400 names the member.
  parseJsonNamingPrototypeMembers(app);
  await registerOpenApi(app);

  late.accessLine = logEachRequestOnce(app, onResponse);
  onResponse.push(countOutcomes(parts.metrics));
  const alwaysAnswered = new Set(['/healthz', '/readyz', '/openapi.json', '/metrics']);
  const { readiness } = parts;
  // Until the first time it is ready the process answers nothing but health: its read models
  // would answer from a partial log. After that an outage is answered where it bites (a token
  // operation that cannot append gets its 503) while verification goes on from memory.
  // Synchronous steps on every request's path, not async hooks: each async hook costs a promise and
  // a microtask turn per request (measured on the protected request against a bare route).
  onRequest.push((request, reply) => {
    if (readiness.hasStarted() || readiness.isReady() || alwaysAnswered.has(request.routeOptions.url ?? '')) return true;
    // Answered here: the steps after it and the route do not run.
    sendProblem(reply.header('retry-after', '1'), {
      type: problemTypes.unavailable,
      title: 'Service Unavailable',
      status: 503,
      detail: `not ready: ${readiness.causes().join('; ')}`,
    });
    return false;
  });
  runServerSteps(app, onRequest, onResponse);
  app.get('/healthz', { schema: builtInRouteSchemas.healthz }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: builtInRouteSchemas.readyz }, async (_request, reply) => {
    const causes = readiness.causes();
    // Ready means every listener is open (serve.ts's readiness check), so each port is known by now.
    if (causes.length === 0) return { status: 'ready', ...(parts.ports ? { ports: parts.ports() } : {}) };
    return sendProblem(reply.header('retry-after', '1'), {
      type: problemTypes.unavailable,
      title: 'Service Unavailable',
      status: 503,
      detail: `not ready: ${causes.join('; ')}`,
      causes,
    });
  });
  app.get('/openapi.json', { schema: builtInRouteSchemas.openapi }, async () => app.swagger());

  for (const register of parts.routes) await register(app, parts.listener ?? { v5: true, v1: true }, onRequest);
  return app;
}
