import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Port variables of 0 (docs/operations.md, "The admin listener"): the system picks a free port as
 * each listener binds it, and the server tells which, in its start line and on /readyz. The
 * default TESSERA_PUBLIC_URL follows the bound port. The harness starts every server this way;
 * here the answers themselves are checked, with v1 on a listener of its own.
 */
interface StartLine {
  readonly urls: string[];
  readonly adminUrl?: string;
  readonly ports: { readonly public: number; readonly legacy?: number; readonly admin?: number };
}
const startLines = (server: TesseraProcess): StartLine[] =>
  server
    .logs()
    .split('\n')
    .filter((line) => line.includes('"msg":"tessera listening"'))
    .map((line) => JSON.parse(line) as StartLine);

let tessera: TesseraProcess;
beforeAll(async () => {
  tessera = await startTessera({ TESSERA_PORT: '0', TESSERA_LEGACY_PORT: '0', TESSERA_ADMIN_PORT: '0' });
});
afterAll(async () => {
  await tessera?.stop();
});

describe('TESSERA_PORT, TESSERA_LEGACY_PORT and TESSERA_ADMIN_PORT of 0', () => {
  it('binds three ports of the system\'s choosing and names each in the start line, with the URLs', () => {
    const [line, ...more] = startLines(tessera);
    expect(more).toEqual([]);
    const { ports } = line!;
    expect(new Set([ports.public, ports.legacy, ports.admin]).size).toBe(3);
    for (const port of [ports.public, ports.legacy, ports.admin]) expect(port).toBeGreaterThan(0);
    expect(line!.urls).toEqual([`https://localhost:${ports.public}`, `https://localhost:${ports.legacy}`]);
    expect(line!.adminUrl).toBe(`https://localhost:${ports.admin}`);
  });

  it('answers the bound ports on /readyz, on every listener', async () => {
    const { ports } = startLines(tessera)[0]!;
    for (const readyz of [tessera.adminRequest('/readyz'), tessera.request('/readyz'), tessera.request('/readyz', { legacy: true })]) {
      const answer = await readyz;
      expect(answer.status).toBe(200);
      expect(answer.json()).toEqual({ status: 'ready', ports });
    }
  });

  it('serves on the ports it named: v5 on the public one, v1 on the legacy one', async () => {
    expect((await tessera.request('/v1/authenticate', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'apiid=x&apikey=y', legacy: true })).status).toBe(401);
    expect((await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: 'tsl_x', transaction_key: 'tsk_y' })).status).toBe(401);
  });

  it('defaults TESSERA_PUBLIC_URL to the public listener\'s bound port', async () => {
    const { ports } = startLines(tessera)[0]!;
    const metadata = (await tessera.request('/.well-known/ssf-configuration')).json();
    expect(metadata.issuer).toBe(`https://127.0.0.1:${ports.public}`);
    expect(metadata.configuration_endpoint).toBe(`https://127.0.0.1:${ports.public}/ssf/streams`);
  });

  it('writes the start line even when TESSERA_LOG_LEVEL hides info lines: no other place tells the ports', async () => {
    const quiet = await startTessera({ TESSERA_LOG_LEVEL: 'warn' });
    try {
      const [line] = startLines(quiet);
      expect(line?.ports.public).toBe(Number(new URL(quiet.baseUrl).port));
      expect(quiet.logs()).not.toContain('"msg":"ready: projections caught up"');
    } finally {
      await quiet.stop();
    }
  });
});
