import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import type { Problem } from '@tessera/contracts';
import { problemTypes, sendProblem } from './problem.js';
import { problemFor } from './problem-table.js';
import { trackRouteMethods } from './route-methods.js';

/**
 * A check that runs on an unrouted request under a path prefix before it is answered 404 or 405:
 * true when it has answered (refused) the request itself.
 */
export type UnroutedGate = (request: FastifyRequest, reply: FastifyReply) => boolean;

/**
 * A step of a server's work as each request arrives: false when it has answered the request (the
 * steps after it, and the route, do not run). A server that gathers its steps runs them in one
 * onRequest hook: fastify costs every hook a turn per request. A step that must wait first (the
 * bearer check refreshing its keys for an unknown kid) answers with a promise instead.
 */
export type RequestStep = (request: FastifyRequest, reply: FastifyReply) => boolean | Promise<boolean>;

/**
 * Runs request steps as an onRequest hook's body: in order, stopping at one that answered (false)
 * without calling `done`, which is fastify's rule for a callback hook that has answered; a step's
 * promise holds the steps after it until it settles, and a rejection goes to `done` as the error.
 */
export function runRequestSteps(steps: readonly RequestStep[], request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void, first = 0): void {
  for (let at = first; at < steps.length; at += 1) {
    const step = steps[at];
    if (step === undefined) break;
    const goOn = step(request, reply);
    if (goOn === true) continue;
    if (goOn === false) return;
    goOn.then(
      (afterWaiting) => afterWaiting && runRequestSteps(steps, request, reply, done, at + 1),
      (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
    );
    return;
  }
  done();
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Puts a gate in front of the 404 and 405 answers for paths under `prefix`: a private API
     * answers a caller it does not know the same refusal whatever the path, so that caller cannot
     * learn which paths and methods exist. Installed by installErrorHandlers.
     */
    guardUnrouted(prefix: string, gate: UnroutedGate): void;
  }
}

/**
 * The one place that turns errors into HTTP answers: every 4xx is problem+json, and a 5xx
 * never carries a stack trace or driver message. Errors with a code in the problem table (the
 * domain's, the issuer's, the ports') are answered from it; then what fastify and the validator
 * throw; anything else is a 500.
 */
export function installErrorHandlers(app: FastifyInstance, steps?: RequestStep[]): void {
  const routes = trackRouteMethods(app);
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const known = problemFor(error);
    if (known) {
      const { problem, rule } = known;
      // An outage's cause is for the operator; a refusal's code is enough (its message is the client's).
      const fields = rule.log.level === 'warn' ? { err: { type: error.name, code: error.code, message: error.message } } : { refusal: error.code };
      request.log[rule.log.level](fields, rule.log.message);
      if (rule.retryAfterSeconds !== undefined) reply.header('retry-after', String(rule.retryAfterSeconds));
      return sendProblem(reply, problem);
    }
    const problem = toProblem(error);
    if (problem.status >= 500) request.log.error({ err: { type: error.name, code: error.code, message: error.message } }, 'request failed');
    return sendProblem(reply, problem);
  });
  const gates: { readonly prefix: string; readonly gate: UnroutedGate }[] = [];
  app.decorate('guardUnrouted', (prefix: string, gate: UnroutedGate) => void gates.push({ prefix, gate }));
  const answerUnrouted = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '';
    for (const { prefix, gate } of gates) if (path.startsWith(prefix) && gate(request, reply)) return reply;
    const allowed = routes.allowedMethods(path);
    // RFC 9110 15.5.6: a path that exists answers a wrong method with 405 and the methods it takes.
    if (allowed.length > 0) {
      return sendProblem(reply.header('allow', allowed.join(', ')), {
        type: problemTypes.methodNotAllowed,
        title: 'Method Not Allowed',
        status: 405,
        detail: `${path} does not take ${request.method}; it takes ${allowed.join(', ')}`,
      });
    }
    return sendProblem(reply, { type: problemTypes.notFound, title: 'Not Found', status: 404, detail: `no route ${request.method} ${path}` });
  };
  // Answered as the request arrives, before fastify looks at a body for a route that does not
  // exist: otherwise its content-type rules (a QUERY must name one) would answer 400 for what
  // is a 404 or a 405.
  // Into the server's steps when it gathers them; else a callback hook of its own (no promise per
  // request), where answering without calling `done` stops the chain.
  const unrouted: RequestStep = (request, reply) => {
    if (!request.is404) return true;
    answerUnrouted(request, reply);
    return false;
  };
  if (steps) steps.push(unrouted);
  else app.addHook('onRequest', (request, reply, done) => runRequestSteps([unrouted], request, reply, done));
  app.setNotFoundHandler(answerUnrouted);
}

function toProblem(error: FastifyError): Problem {
  if (hasZodFastifySchemaValidationErrors(error)) {
    const part = requestParts[error.validationContext ?? 'body'] ?? requestParts.body!;
    return {
      type: problemTypes.badRequest,
      title: 'Bad Request',
      status: 400,
      detail: part.detail,
      errors: error.validation.map((issue) => fieldError(issue, part.whole)),
    };
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { type: problemTypes.unsupportedMediaType, title: 'Unsupported Media Type', status: 415, detail: 'unsupported content type for this route' };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { type: problemTypes.payloadTooLarge, title: 'Content Too Large', status: 413, detail: 'the request body is larger than 16 KiB' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return badRequest('the request body is empty');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return badRequest('the request body is not valid JSON');
    default:
      break;
  }
  if (error.statusCode === 400 || ('type' in error && error.type === 'entity.parse.failed') || error instanceof SyntaxError) {
    return badRequest('the request body could not be parsed');
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return { type: problemTypes.badRequest, title: 'Bad Request', status: error.statusCode, detail: 'the request was refused' };
  }
  return { type: problemTypes.internal, title: 'Internal Server Error', status: 500, detail: 'the server could not complete the request' };
}

/** Which part of the request failed validation, in the words a client reads. */
const requestParts: Record<string, { detail: string; whole: string }> = {
  body: { detail: 'the request body is missing a required field, or has an empty, unknown or invalid one', whole: '(body)' },
  querystring: { detail: 'the query string is missing a required parameter, or has an empty, unknown or invalid one', whole: '(query)' },
  params: { detail: 'a path parameter is invalid', whole: '(path)' },
  headers: { detail: 'a request header is missing or invalid', whole: '(headers)' },
};

const badRequest = (detail: string): Problem => ({ type: problemTypes.badRequest, title: 'Bad Request', status: 400, detail });

interface ValidationIssue {
  readonly instancePath?: string;
  readonly message?: string;
  readonly params?: { issue?: { code?: string; keys?: string[]; path?: PropertyKey[] } };
}

function fieldError(issue: ValidationIssue, whole: string): { field: string; message: string } {
  const zodIssue = issue.params?.issue;
  if (zodIssue?.code === 'unrecognized_keys' && zodIssue.keys) {
    return { field: zodIssue.keys.join(', '), message: 'unknown field' };
  }
  const path = zodIssue?.path?.map(String).join('.') ?? issue.instancePath?.replace(/^\//, '').replaceAll('/', '.') ?? '';
  return { field: path === '' ? whole : path, message: issue.message ?? 'invalid' };
}
