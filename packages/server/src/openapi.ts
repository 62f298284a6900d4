import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { HealthStatus, OpenApiDocument, ReadinessStatus } from '@tessera/contracts';
import { problemResponses } from '@tessera/http';
import { refusePrototypeMembersInBodies } from './openapi-prototype-members.js';

/**
 * The OpenAPI 3.1 document at /openapi.json, generated from the route schemas that check the
 * requests. Every route a listener serves is in it (HEAD included: fastify answers HEAD for
 * every GET), each error as problem+json. What no single operation can say is in the
 * description: 405 for a method a path does not take, and what Node refuses before routing.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Tessera', version: '0.1.0', description },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          // RFC 9449: a DPoP-bound token, `Authorization: DPoP <token>`, with a proof in the `DPoP` header for each request.
          dpop: { type: 'http', scheme: 'DPoP', bearerFormat: 'JWT', description: 'A DPoP-bound access token (RFC 9449): `Authorization: DPoP <token>`, with a `DPoP` proof header for this request' },
        },
      },
    },
    exposeHeadRoutes: true,
    transform: jsonSchemaTransform,
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      addResponseHeaders(document.openapiObject);
      markOptionalBodies(document.openapiObject);
      refusePrototypeMembersInBodies(document.openapiObject);
      return document.openapiObject;
    },
  });
}

const description = [
  'Event-sourced token authority: the current interface (v5) and the older one (v1), described in docs/interface.md of the repository.',
  '',
  'Every error is `application/problem+json` (RFC 9457), except on the OAuth 2.0 endpoints (`/oauth2/*`), which',
  'answer RFC 6749 section 5.2 JSON (`error`, `error_description`) as OAuth clients expect. Beyond the statuses each operation lists:',
  'a known path asked with a method it does not take answers 405 with `Allow`; a request Node cannot',
  'parse answers 400, headers that are too large 431, a request that does not arrive in time 408,',
  'and an unknown method 501, each on a connection that is then closed.',
  '',
  'In a JSON request body, no object at any depth may have a member named `__proto__`, nor a member named',
  '`constructor` that is an object with a `prototype` member (each body schema says so at every object level):',
  'such a body answers 400 naming the field in `errors`, and changes nothing.',
].join('\n');

/** The schemas of the routes every listener serves: documented like the others. */
export const builtInRouteSchemas = {
  healthz: { summary: 'Liveness: the process is up', tags: ['health'], response: { 200: HealthStatus } },
  readyz: {
    summary: 'Readiness: 200 once projections have caught up and the store and signing key are usable; 503 naming the causes otherwise',
    tags: ['health'],
    response: { 200: ReadinessStatus, ...problemResponses(503) },
  },
  openapi: { summary: 'This OpenAPI document', tags: ['meta'], response: { 200: OpenApiDocument } },
};

type Parameter = { in: string; name: string; required?: boolean; description?: string; schema?: object };
type Operation = {
  security?: unknown[];
  requestBody?: { required?: boolean };
  'x-body-optional'?: boolean;
  parameters?: Parameter[];
  responses?: Record<string, { headers?: Record<string, unknown> }>;
  'x-query-any-of'?: object[];
};

const retryAfter = { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } };
const challenge = { description: 'The RFC 6750 Bearer challenge, or the RFC 9449 DPoP challenge for a request with a DPoP-bound token (both schemes when no credentials were sent)', schema: { type: 'string' } };

/**
 * The headers an answer carries by its status: the zod transform keeps only a response's body,
 * so they are added here. Only bearer-protected operations challenge; the token endpoints,
 * which take credentials in the body, do not.
 */
function addResponseHeaders(openapiObject: { paths?: object }): void {
  for (const path of Object.values((openapiObject.paths ?? {}) as Record<string, Record<string, Operation | undefined>>)) {
    for (const operation of Object.values(path)) {
      if (typeof operation !== 'object' || operation === null || !operation.responses) continue;
      joinQueryParameters(operation);
      const protectedByBearer = (operation.security ?? []).length > 0;
      for (const [status, response] of Object.entries(operation.responses)) {
        if ((status === '401' || status === '403') && protectedByBearer) response.headers = { ...response.headers, 'WWW-Authenticate': challenge };
        if (status === '429' || status === '503') response.headers = { ...response.headers, 'Retry-After': retryAfter };
      }
    }
  }
}

/**
 * @fastify/swagger calls every body required; a route whose schema says `x-body-optional` takes
 * none as well (the body schema then also takes null, what fastify hands over for no body).
 */
function markOptionalBodies(openapiObject: { paths?: object }): void {
  for (const path of Object.values((openapiObject.paths ?? {}) as Record<string, Record<string, Operation | undefined>>)) {
    for (const operation of Object.values(path)) {
      if (typeof operation !== 'object' || operation === null || !operation['x-body-optional']) continue;
      delete operation['x-body-optional'];
      if (operation.requestBody) operation.requestBody.required = false;
    }
  }
}

/**
 * A route whose query parameters depend on each other (`x-query-any-of`: forward-auth needs a
 * permission or authenticated=true) is described as OpenAPI 3.1 allows it: one object
 * parameter, `style: form, explode: true` (the same `?a=1&b=2` on the wire), whose schema
 * carries the `anyOf`. Separate optional parameters would call a query with neither valid.
 */
function joinQueryParameters(operation: Operation): void {
  const anyOf = operation['x-query-any-of'];
  if (!anyOf) return;
  delete operation['x-query-any-of'];
  const query = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query');
  const properties = Object.fromEntries(query.map((parameter) => [parameter.name, { ...parameter.schema, ...(parameter.description ? { description: parameter.description } : {}) }]));
  const joined: Parameter & { style: string; explode: boolean } = {
    in: 'query',
    name: 'requirement',
    required: true,
    style: 'form',
    explode: true,
    schema: { type: 'object', properties, anyOf },
  };
  operation.parameters = [...(operation.parameters ?? []).filter((parameter) => parameter.in !== 'query'), joined];
}
