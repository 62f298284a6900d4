import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '@tessera/config';
import { buildApp } from './app.js';
import { createMetrics, createReadiness } from '@tessera/host';
import { loadTlsMaterial } from './tls.js';
import { transportSettings } from './transport.js';

/**
 * The TLS a real listener offers, asked by openssl as a scanner would ask it,
 * and the headers on its answers. The certificate is the self-signed one Tessera makes: a P-256
 * key, so the ECDSA suites are the ones that can be negotiated.
 */
const run = promisify(execFile);
let dataDir: string;
let app: FastifyInstance;
let port: number;
let ca: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'tessera-tls-'));
  const config = loadConfig({ TESSERA_DATA_DIR: dataDir });
  const tls = await loadTlsMaterial(config);
  ca = tls.cert;
  app = await buildApp({ tls, logLevel: 'silent', readiness: createReadiness(), metrics: createMetrics(), routes: [], transport: transportSettings(config) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
});
afterAll(async () => {
  await app?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** openssl's exit status says whether the handshake completed; its output names what was agreed. */
async function handshake(flags: string[]): Promise<{ connected: boolean; output: string }> {
  try {
    const running = run('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost', ...flags], { timeout: 10_000 });
    // s_client keeps the connection until its stdin ends: end it, so it quits after the handshake.
    running.child.stdin?.end();
    const { stdout } = await running;
    return { connected: true, output: stdout };
  } catch (error) {
    return { connected: false, output: String((error as { stdout?: string }).stdout ?? '') };
  }
}

describe('TLS 1.2 offers only ECDHE with AES-GCM or ChaCha20-Poly1305', () => {
  it.each([
    ['ECDHE-ECDSA-AES128-SHA', 'CBC with a SHA-1 MAC'],
    ['ECDHE-ECDSA-AES256-SHA', 'CBC with a SHA-1 MAC'],
    ['ECDHE-ECDSA-AES128-SHA256', 'CBC with SHA-256'],
    ['ECDHE-ECDSA-AES256-SHA384', 'CBC with SHA-384'],
    ['ECDHE-ECDSA-AES128-CCM8', 'CCM8'],
    ['ECDHE-ECDSA-AES128-CCM', 'CCM'],
    ['ECDHE-ECDSA-ARIA128-GCM-SHA256', 'ARIA'],
    ['ECDHE-ECDSA-CAMELLIA128-SHA256', 'Camellia'],
  ])('openssl s_client -tls1_2 -cipher %s (%s) fails to connect', async (cipher) => {
    expect(await handshake(['-tls1_2', '-cipher', cipher])).toMatchObject({ connected: false });
  });

  it.each(['ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384', 'ECDHE-ECDSA-CHACHA20-POLY1305'])(
    'openssl s_client -tls1_2 -cipher %s connects with that suite',
    async (cipher) => {
      const result = await handshake(['-tls1_2', '-cipher', cipher]);
      expect(result.connected).toBe(true);
      expect(result.output).toMatch(new RegExp(`Cipher is ${cipher}\\b`));
    },
  );

  it('TLS 1.3 connects; TLS 1.1 does not', async () => {
    const modern = await handshake(['-tls1_3']);
    expect(modern.connected).toBe(true);
    expect(modern.output).toMatch(/TLSv1\.3/);
    expect((await handshake(['-tls1_1', '-cipher', 'DEFAULT:@SECLEVEL=0'])).connected).toBe(false);
  });
});

describe('headers on every answer', () => {
  async function get(path: string): Promise<{ status: number; headers: Record<string, unknown> }> {
    return new Promise((resolve, reject) => {
      const outgoing = request({ host: '127.0.0.1', port, path, servername: 'localhost', ca, agent: false }, (incoming) => {
        incoming.resume();
        incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers }));
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
  }

  it.each([
    ['/healthz', 200],
    ['/no-such-route', 404],
  ])('GET %s (%i) carries Strict-Transport-Security and X-Content-Type-Options: nosniff', async (path, status) => {
    const answer = await get(path);
    expect(answer.status).toBe(status);
    expect(answer.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
  });
});
