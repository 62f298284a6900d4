import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * /openapi.json documents every route the public listener serves, with every status it can
 * answer, errors as problem+json, and the bearer scheme where a token is needed. The app is the
 * all-in-one as `tessera start` wires it (both interfaces on one listener).
 */
let tessera: InProcessAllInOne;
let document: OpenApi;

beforeAll(async () => {
  tessera = await startInProcess();
  const answer = await tessera.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(answer.statusCode).toBe(200);
  document = answer.json<OpenApi>();
});
afterAll(async () => {
  await tessera?.close();
});

interface OpenApiResponse {
  description?: string;
  content?: Record<string, { schema?: unknown }>;
  headers?: Record<string, unknown>;
}
interface OpenApiOperation {
  security?: Record<string, string[]>[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  parameters?: unknown[];
  responses: Record<string, OpenApiResponse>;
}
interface OpenApi {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { securitySchemes: Record<string, unknown>; schemas?: Record<string, unknown> };
}

/** What the app serves, from fastify's own route table: "├── /path (GET, HEAD)". */
function servedOperations(): string[] {
  return tessera.app
    .printRoutes({ commonPrefix: false })
    .split('\n')
    .flatMap((line) => {
      const match = /── (\S+) \(([A-Z, ]+)\)/.exec(line);
      return match ? match[2]!.split(', ').map((method) => `${method} ${match[1]!}`) : [];
    });
}
const documentedOperations = () => Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`));
const operation = (method: string, path: string) => document.paths[path]?.[method.toLowerCase()];
// /metrics moves to the admin listener: management, not part of the public document.
const management = new Set(['GET /metrics', 'HEAD /metrics']);

describe('/openapi.json', () => {
  it('names this transmitter\'s issuer as the one iss an iss_sub subject may carry, as the routes check it', () => {
    // The port is fixed here (TESSERA_PORT's default), so the issuer is known as the routes are made.
    for (const path of ['/ssf/subjects/add', '/ssf/subjects/remove']) {
      const body = JSON.stringify(operation('POST', path)?.requestBody?.content?.['application/json']?.schema);
      expect(body, path).toMatch(/"iss":\{[^}]*"enum":\["https:\/\/127\.0\.0\.1:8443"\]/);
    }
  });

  it('is an OpenAPI 3.1 document with the bearer security scheme', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info).toMatchObject({ title: 'Tessera', version: expect.any(String) });
    expect(document.components.securitySchemes.bearer).toEqual({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(document.components.securitySchemes.dpop).toMatchObject({ type: 'http', scheme: 'DPoP' });
  });

  it('documents every method of every route the listener serves, and nothing it does not serve', () => {
    const served = servedOperations().filter((served) => !management.has(served));
    expect(served.length).toBeGreaterThan(15);
    expect(new Set(documentedOperations())).toEqual(new Set(served));
    for (const route of ['GET /healthz', 'GET /readyz', 'GET /.well-known/jwks.json', 'GET /openapi.json', 'POST /v5/Transaction/charge', 'GET /v1/account']) {
      expect(documentedOperations()).toContain(route);
    }
  });

  it('gives every response a content type, and every error application/problem+json but the OAuth 2.0 endpoints\' RFC 6749 JSON', () => {
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, { responses }] of Object.entries(operations)) {
        expect(Object.keys(responses).length, `${method} ${path}`).toBeGreaterThan(0);
        for (const [status, response] of Object.entries(responses)) {
          const types = Object.keys(response.content ?? {});
          // 204 No Content has none (the Shared Signals routes answer it, as SSF 1.0 says).
          if (status === '204') {
            expect(types, `${method} ${path} ${status}`).toEqual([]);
            continue;
          }
          const errorType = path.startsWith('/oauth2/') ? 'application/json' : 'application/problem+json';
          expect(types, `${method} ${path} ${status}`).toEqual(Number(status) >= 400 ? [errorType] : ['application/json']);
          expect(response.content?.[types[0]!]?.schema, `${method} ${path} ${status}`).toBeDefined();
        }
      }
    }
  });

  it('lists forward-auth\'s 400, 401 and 403 on every method it takes, its audience, the headers a DPoP proof is checked with, and says the query needs a permission or authenticated=true', () => {
    for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      const forwardAuth = operation(method, '/forward-auth')!;
      expect(Object.keys(forwardAuth.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403']));
      const headerParameter = (name: string) => expect.objectContaining({ in: 'header', name, required: false, description: expect.any(String), schema: expect.objectContaining({ type: 'string' }) });
      expect(forwardAuth.parameters).toEqual([
        ...['dpop', 'x-forwarded-method', 'x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-uri', 'x-original-method', 'x-original-url'].map(headerParameter),
        expect.objectContaining({
          in: 'query',
          style: 'form',
          explode: true,
          required: true,
          schema: expect.objectContaining({
            properties: { permission: expect.any(Object), authenticated: expect.any(Object), interface: expect.any(Object), audience: expect.any(Object) },
            anyOf: [expect.objectContaining({ required: ['permission'] }), expect.objectContaining({ required: ['authenticated'] })],
          }),
        }),
      ]);
      expect(forwardAuth).not.toHaveProperty('x-query-any-of');
    }
  });

  it('puts the bearer and DPoP schemes, with the WWW-Authenticate challenge, on the protected routes only', () => {
    for (const [method, path] of [['POST', '/v5/Transaction/charge'], ['GET', '/v1/account'], ['GET', '/forward-auth']] as const) {
      const protectedOperation = operation(method, path)!;
      expect(protectedOperation.security, `${method} ${path}`).toEqual([{ bearer: [] }, { dpop: [] }]);
      expect(protectedOperation.responses['401']?.headers, `${method} ${path}`).toHaveProperty('WWW-Authenticate');
    }
    expect(operation('POST', '/v5/Transaction/charge')!.responses['403']?.headers).toHaveProperty('WWW-Authenticate');
    for (const path of ['/v5/Authorization/get-oauth-token', '/v5/Authorization/refresh-oauth-token', '/v5/Authorization/revoke-oauth-token', '/v1/authenticate']) {
      expect(operation('POST', path)!.security ?? []).toEqual([]);
      expect(operation('POST', path)!.responses['401']?.headers ?? {}).not.toHaveProperty('WWW-Authenticate');
    }
  });

  it('lists 429 and 503 with Retry-After on the token routes, and 503 on readiness', () => {
    for (const path of ['/v5/Authorization/get-oauth-token', '/v5/Authorization/refresh-oauth-token', '/v5/Authorization/revoke-oauth-token', '/v1/authenticate']) {
      for (const status of ['400', '401', '413', '415', '429', '503']) expect(operation('POST', path)!.responses, `${path} ${status}`).toHaveProperty(status);
      expect(operation('POST', path)!.responses['429']?.headers).toHaveProperty('Retry-After');
      expect(operation('POST', path)!.responses['503']?.headers).toHaveProperty('Retry-After');
    }
    expect(Object.keys(operation('GET', '/readyz')!.responses)).toEqual(['200', '503']);
  });

  it('matches real answers: each status provoked here is documented, with the content type it was sent with', async () => {
    const json = { 'content-type': 'application/json' };
    const cases: [method: 'GET' | 'POST', url: string, payload: string | undefined, status: number][] = [
      ['GET', '/healthz', undefined, 200],
      ['GET', '/readyz', undefined, 200],
      ['GET', '/.well-known/jwks.json', undefined, 200],
      ['GET', '/forward-auth', undefined, 400],
      ['GET', '/forward-auth?authenticated=true', undefined, 401],
      ['POST', '/v5/Authorization/get-oauth-token', '{}', 400],
      ['POST', '/v5/Authorization/get-oauth-token', '{"api_login_id":"x","transaction_key":"y"}', 401],
      ['POST', '/v5/Transaction/charge', '{}', 401],
    ];
    for (const [method, url, payload, status] of cases) {
      const answer = await tessera.app.inject({ method, url, ...(payload === undefined ? {} : { payload, headers: json }) });
      expect(answer.statusCode, `${method} ${url}`).toBe(status);
      const documented = operation(method, url.split('?')[0]!)!.responses[String(status)];
      expect(documented, `${method} ${url} ${status}`).toBeDefined();
      expect(Object.keys(documented!.content!), `${method} ${url} ${status}`).toEqual([String(answer.headers['content-type']).split(';')[0]]);
    }
  });
});

describe('/openapi.json: the prototype members a JSON body may not hold', () => {
  // strict off: the schemas carry OpenAPI's annotations, and refs point into `components` beside them.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const listeners = [
    ['public', () => document],
    ['admin', () => adminDocument],
  ] as const;
  let adminDocument: OpenApi;
  beforeAll(async () => {
    adminDocument = (await tessera.admin.inject({ method: 'GET', url: '/openapi.json' })).json<OpenApi>();
  });

  /** Every JSON request body schema of a document, by operation. */
  const jsonBodies = (openApi: OpenApi) =>
    Object.entries(openApi.paths).flatMap(([path, operations]) =>
      Object.entries(operations).flatMap(([method, { requestBody }]) =>
        Object.entries(requestBody?.content ?? {})
          .filter(([mediaType]) => /^application\/([\w.+-]+\+)?json$/.test(mediaType))
          .map(([, { schema }]) => ({ operation: `${method.toUpperCase()} ${path}`, schema })),
      ),
    );

  /** Every schema a body's value or a member of it, at any depth, is checked against: refs followed, `not` and `if` aside. */
  function* levels(schema: unknown, openApi: OpenApi, at: string, seen = new Set<unknown>()): Generator<{ schema: unknown; at: string }> {
    if (seen.has(schema)) return;
    seen.add(schema);
    yield { schema, at };
    if (typeof schema !== 'object' || schema === null) return;
    const node = schema as Record<string, unknown>;
    if (typeof node.$ref === 'string') {
      const target = openApi.components.schemas?.[node.$ref.replace('#/components/schemas/', '')];
      expect(target, `${at}: ${node.$ref}`).toBeDefined();
      yield* levels(target, openApi, node.$ref, seen);
    }
    for (const keyword of ['additionalProperties', 'unevaluatedProperties', 'items', 'unevaluatedItems', 'then', 'else']) {
      if (node[keyword] !== undefined) yield* levels(node[keyword], openApi, `${at}/${keyword}`, seen);
    }
    for (const keyword of ['allOf', 'anyOf', 'oneOf', 'prefixItems']) {
      for (const [index, member] of ((node[keyword] ?? []) as unknown[]).entries()) yield* levels(member, openApi, `${at}/${keyword}/${index}`, seen);
    }
    for (const keyword of ['properties', 'patternProperties', 'dependentSchemas']) {
      for (const [name, member] of Object.entries((node[keyword] ?? {}) as Record<string, unknown>)) yield* levels(member, openApi, `${at}/${keyword}/${name}`, seen);
    }
  }

  const describesObjects = (node: Record<string, unknown>) =>
    node.type === 'object' || (Array.isArray(node.type) && node.type.includes('object')) || (node.type === undefined && ['properties', 'additionalProperties', 'patternProperties', 'propertyNames', 'required'].some((keyword) => keyword in node));
  const annotations = new Set(['title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$comment']);
  /** A schema that takes any value says nothing of what an object in it may hold. */
  const takesAnything = (schema: unknown) => schema === true || (typeof schema === 'object' && schema !== null && Object.keys(schema).every((keyword) => annotations.has(keyword)));

  it.each(listeners)('on the %s listener, every object level of every JSON request body refuses a __proto__ member name, and a constructor member holding prototype', (_listener, openApi) => {
    const bodies = jsonBodies(openApi());
    expect(bodies.length).toBeGreaterThan(0);
    for (const { operation, schema } of bodies) {
      let objectLevels = 0;
      for (const level of levels(schema, openApi(), operation)) {
        expect(takesAnything(level.schema), `${level.at} takes any value, objects with any members included`).toBe(false);
        const node = level.schema as Record<string, unknown>;
        if (typeof node !== 'object' || node === null || !describesObjects(node)) continue;
        objectLevels += 1;
        const names = ajv.compile((node.propertyNames ?? true) as object);
        expect(names('__proto__'), `${level.at}: propertyNames takes __proto__`).toBe(false);
        // The level's own `not`s (beside its other keywords, or each alone under allOf), checked apart from what the level requires.
        const bars = [node.not, ...((node.allOf ?? []) as Record<string, unknown>[]).filter((member) => Object.keys(member).join() === 'not').map((member) => member.not)].filter(Boolean);
        const members = ajv.compile({ allOf: bars.map((bar) => ({ not: bar })) });
        expect(members({ constructor: { prototype: {} } }), `${level.at}: a constructor member holding prototype is taken`).toBe(false);
        for (const taken of [{}, { constructor: 1 }, { constructor: {} }, { prototype: {} }, 'not an object']) expect(members(taken), `${level.at}: ${JSON.stringify(taken)} is refused`).toBe(true);
      }
      expect(objectLevels, operation).toBeGreaterThan(0);
    }
  });

  it('says so of an open body at every depth: the charge body takes any object but one holding a prototype member', () => {
    const schema = operation('POST', '/v5/Transaction/charge')!.requestBody!.content!['application/json']!.schema as object;
    // The document's components beside the body schema, where its refs point.
    const valid = ajv.compile({ ...schema, components: document.components });
    for (const taken of ['{"amount": 1, "constructor": {"x": 1}, "a": [{"constructor": 1, "proto": {}}]}', '{"a": {"prototype": {"b": [null, true, "x"]}}}']) {
      expect(valid(JSON.parse(taken)), taken).toBe(true);
    }
    for (const refused of ['{"__proto__": {}}', '{"a": {"b": [1, {"__proto__": 1}]}}', '{"constructor": {"prototype": {}}}', '{"a": [{"constructor": {"prototype": 1}}]}']) {
      expect(valid(JSON.parse(refused)), refused).toBe(false);
    }
  });

  it.each(listeners)('on the %s listener, every operation with a JSON body lists the 400 that refuses it, with its offending fields', (_listener, openApi) => {
    for (const { operation: name } of jsonBodies(openApi())) {
      const [method, path] = name.split(' ') as [string, string];
      const badRequest = openApi().paths[path]![method.toLowerCase()]!.responses['400'];
      expect(badRequest, name).toBeDefined();
      expect(badRequest!.content?.['application/problem+json']?.schema, name).toMatchObject({
        properties: { errors: { type: 'array', items: { properties: { field: { type: 'string' }, message: { type: 'string' } } } } },
      });
    }
  });
});
