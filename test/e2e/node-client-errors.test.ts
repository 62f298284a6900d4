import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';

/**
 * docs/interface.md, Errors: every error is problem+json, Node's own included. These requests are
 * refused by Node's HTTP parser before fastify routes them, so they go over the real TLS socket
 * of a running server, as raw bytes (Node's client would refuse to send most of them).
 */
let tessera: TesseraProcess;
beforeAll(async () => {
  tessera = await startTessera();
});
afterAll(async () => {
  await tessera?.stop();
});

function exchange(bytes: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { port } = new URL(tessera.baseUrl);
  const ca = readFileSync(join(tessera.dataDir, 'tls', 'self-signed.crt'));
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: Number(port), servername: 'localhost', ca }, () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

function expectProblem(answer: Awaited<ReturnType<typeof exchange>>, status: number): void {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('application/problem+json');
  expect(JSON.parse(answer.body)).toMatchObject({ status, type: expect.stringMatching(/^urn:tessera:problem:/), title: expect.any(String), detail: expect.any(String) });
}

describe('errors Node raises before fastify sees the request', () => {
  it('an unknown method is 501 problem+json (RFC 9110 9.1)', async () => {
    expectProblem(await exchange('FROB /v5/Authorization/get-oauth-token HTTP/1.1\r\nHost: localhost\r\n\r\n'), 501);
  });

  it('a control character in a header is 400 problem+json', async () => {
    expectProblem(await exchange('POST /v5/Authorization/get-oauth-token HTTP/1.1\r\nHost: localhost\r\nX-Note: a\u0007b\r\n\r\n'), 400);
  });

  it('headers over the limit are 431 problem+json, without the header echoed', async () => {
    const answer = await exchange(`GET /healthz HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${'s'.repeat(20_000)}\r\n\r\n`);
    expectProblem(answer, 431);
    expect(answer.body).not.toContain('sss');
  });

  it('the server goes on answering other connections', async () => {
    expect((await tessera.request('/healthz')).status).toBe(200);
  });
});
