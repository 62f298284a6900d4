import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * What fastify refuses before any route or hook runs (a path that is not valid percent-encoding,
 * a path parameter past its length limit) is answered like every other refusal, on both
 * listeners of the all-in-one as `tessera start` wires it: problem+json, HSTS and nosniff, no
 * echo of the path.
 */
let tessera: InProcessAllInOne;
beforeAll(async () => {
  tessera = await startInProcess();
});
afterAll(async () => {
  await tessera?.close();
});

function expectFrameworkProblem(answer: LightMyRequestResponse, status: number, path: string): void {
  expect(answer.statusCode).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(answer.headers['cache-control']).toBe('no-store');
  expect(answer.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
  expect(answer.headers['x-content-type-options']).toBe('nosniff');
  expect(answer.json()).toMatchObject({ status, type: expect.stringMatching(/^urn:tessera:problem:/), title: expect.any(String), detail: expect.any(String) });
  expect(answer.body).not.toContain(path);
  expect(answer.body).not.toContain('FST_');
}

describe.each([
  ['public', () => tessera.app],
  ['admin', () => tessera.admin],
] as [string, () => FastifyInstance][])('on the %s listener', (_listener, app) => {
  it.each(['/admin/v1/accounts/%E0%A4%A/access-at', '/v5/Authorization/%E0%A4%A', '/forward-auth/%E0%A4%A'])('a path that is not valid percent-encoding (%s) is 400 problem+json with the security headers', async (path) => {
    expectFrameworkProblem(await app().inject({ method: 'GET', url: path }), 400, path);
  });
});

describe('on the admin listener', () => {
  it('a path parameter past its length limit is 414 problem+json with the security headers', async () => {
    const path = `/admin/v1/accounts/${'a'.repeat(101)}/access-at`;
    const answer = await tessera.admin.inject({ method: 'GET', url: path });
    expectFrameworkProblem(answer, 414, path);
    expect(answer.json()).toMatchObject({ type: 'urn:tessera:problem:uri-too-long' });
  });
});
