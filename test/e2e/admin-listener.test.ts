import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Management off the public port, as Hydra (admin port) and Keycloak
 * (management interface) do. `/metrics` is served on the admin listener only; both listeners
 * answer the health probes. The relay has one too (runHost gives every service one); it needs
 * Kafka, so test/e2e/kafka-region.test.ts reads its /metrics there.
 */
let allInOne: TesseraProcess;
let issuer: TesseraProcess;
let verifier: TesseraProcess;

beforeAll(async () => {
  allInOne = await startTessera();
  issuer = await startTessera({}, { command: 'issuer', keepData: true });
  verifier = await startTessera({}, { command: 'verifier', dataDir: issuer.dataDir });
});
afterAll(async () => {
  await allInOne?.stop();
  await verifier?.stop();
  await issuer?.stop();
});

const services = () =>
  [
    ['all-in-one', allInOne],
    ['issuer', issuer],
    ['verifier', verifier],
  ] as const;

describe('the admin listener', () => {
  it.each(['all-in-one', 'issuer', 'verifier'])('%s: serves /metrics, /healthz and /readyz over HTTPS on TESSERA_ADMIN_PORT', async (name) => {
    const service = services().find(([candidate]) => candidate === name)![1];
    expect(service.adminUrl).toMatch(/^https:\/\/localhost:\d+$/);
    const metrics = await service.adminRequest('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
    expect(metrics.text).toMatch(/^tessera_ready 1$/m);
    expect((await service.adminRequest('/healthz')).json()).toEqual({ status: 'ok' });
    expect((await service.adminRequest('/readyz')).json()).toEqual({ status: 'ready', ports: { public: Number(new URL(service.baseUrl).port), admin: Number(new URL(service.adminUrl!).port) } });
  });

  it.each(['all-in-one', 'issuer', 'verifier'])('%s: /metrics is not on the public port (404), which keeps /healthz and /readyz', async (name) => {
    const service = services().find(([candidate]) => candidate === name)![1];
    const metrics = await service.request('/metrics');
    expect(metrics.status).toBe(404);
    expect(metrics.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect((await service.request('/healthz')).status).toBe(200);
    expect((await service.request('/readyz')).status).toBe(200);
  });

  it('serves none of the public routes', async () => {
    expect((await allInOne.adminRequest('/.well-known/jwks.json')).status).toBe(404);
    const token = await allInOne.adminRequest('/v5/Authorization/get-oauth-token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_login_id: 'x', transaction_key: 'y' }),
    });
    expect(token.status).toBe(404);
  });
});

describe('TESSERA_ADMIN_PORT=off', () => {
  it('opens no admin listener: the process listens on its public port alone, and /metrics is nowhere', async () => {
    const quiet = await startTessera({ TESSERA_ADMIN_PORT: 'off' });
    try {
      expect(quiet.adminUrl).toBeUndefined();
      const listening = quiet
        .logs()
        .split('\n')
        .filter((line) => line.includes('"msg":"tessera listening"'))
        .map((line) => JSON.parse(line) as { urls: string[]; adminUrl?: string });
      expect(listening).toEqual([expect.objectContaining({ urls: [quiet.baseUrl] })]);
      expect(listening[0]!.adminUrl).toBeUndefined();
      expect((await quiet.request('/metrics')).status).toBe(404);
      expect((await quiet.request('/readyz')).status).toBe(200);
    } finally {
      await quiet.stop();
    }
  });
});
