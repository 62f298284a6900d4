import { connect } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerClientError } from './client-error.js';
import { systemClock } from '@tessera/timing';

/**
 * What Node's parser refuses never reaches fastify's routes or inject(): these go through a real
 * socket. The timeouts are short here so the 408 comes within the test.
 */
let app: FastifyInstance;
let port: number;
beforeAll(async () => {
  // Node checks the request timeout only while headersTimeout <= requestTimeout, every connectionsCheckingInterval.
  app = Fastify({ clientErrorHandler: answerClientError, requestTimeout: 300, http: { headersTimeout: 200, connectionsCheckingInterval: 50 } });
  app.post('/things', async () => ({ ok: true }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as { port: number }).port;
});
afterAll(async () => {
  await app?.close();
});

/** Sends raw bytes and reads until the server closes the connection. */
function exchange(bytes: string | Buffer): Promise<{ status: number; headers: Record<string, string>; body: string; elapsedMs: number }> {
  const started = systemClock.now();
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, elapsedMs: systemClock.now() - started });
    });
  });
}

function expectProblem(answer: Awaited<ReturnType<typeof exchange>>, status: number): Record<string, unknown> {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('application/problem+json');
  expect(answer.headers['cache-control']).toBe('no-store');
  expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
  const problem = JSON.parse(answer.body) as Record<string, unknown>;
  expect(problem).toMatchObject({ status, type: expect.stringMatching(/^urn:tessera:problem:/), title: expect.any(String), detail: expect.any(String) });
  return problem;
}

describe('errors Node raises before fastify sees the request', () => {
  it('a method Node does not know is 501 problem+json (RFC 9110 9.1); a request line that is not HTTP is 400', async () => {
    expectProblem(await exchange('FROB /things HTTP/1.1\r\nHost: x\r\n\r\n'), 501);
    expectProblem(await exchange('\u0001\u0002 nonsense\r\n\r\n'), 400);
  });

  it('a control character in a header value or name is 400 problem+json', async () => {
    expectProblem(await exchange('POST /things HTTP/1.1\r\nHost: x\r\nX-Note: a\u0001b\r\n\r\n'), 400);
    expectProblem(await exchange('POST /things HTTP/1.1\r\nHost: x\r\nX-N\u0001ote: ab\r\n\r\n'), 400);
  });

  it('headers over the limit are 431 problem+json, and the refused header is not echoed', async () => {
    const secret = `Bearer ${'s'.repeat(20_000)}`;
    const answer = await exchange(`POST /things HTTP/1.1\r\nHost: x\r\nAuthorization: ${secret}\r\n\r\n`);
    expectProblem(answer, 431);
    expect(answer.body).not.toContain('sss');
  });

  it('a body that stalls past the request timeout is 408 problem+json, and the connection is closed', async () => {
    const answer = await exchange('POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 16000\r\n\r\n{');
    expectProblem(answer, 408);
    expect(answer.elapsedMs).toBeLessThan(5_000);
  });

  it('leaves well-formed requests to fastify', async () => {
    const answer = await exchange('POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}');
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ ok: true });
  });
});
