import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/tessera-process.js';

/**
 * A process that cannot start must say why in one line and exit non-zero within seconds,
 * never linger half-started. Each case runs `tessera start` as a user does.
 */
const cli = join(resolve(import.meta.dirname, '..', '..'), 'services', 'cli', 'bin', 'tessera.js');

async function startExpectingExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-start-fail-'));
  const child = spawn(process.execPath, [cli, 'start'], {
    // Ports the system picks unless the case is about one: the defaults may be taken by a neighbour.
    env: { ...process.env, TESSERA_DATA_DIR: dataDir, TESSERA_HOST: '127.0.0.1', TESSERA_PORT: '0', TESSERA_ADMIN_PORT: '0', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  // One that lingers is killed, and then has no exit code of its own: each case expects one.
  const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const code = await new Promise<number | null>((resolveExit) => child.once('exit', resolveExit));
  clearTimeout(killer);
  rmSync(dataDir, { recursive: true, force: true });
  return { code, stderr };
}

describe('fatal start errors', () => {
  let squatter: Server;
  let takenPort: number;
  beforeAll(async () => {
    squatter = createServer();
    await new Promise<void>((ready) => squatter.listen(0, '127.0.0.1', ready));
    const address = squatter.address();
    takenPort = typeof address === 'object' && address ? address.port : 0;
  });
  afterAll(() => new Promise<void>((done) => squatter.close(() => done())));

  it('a taken TESSERA_PORT: exit 1, one line naming the port and the reason', async () => {
    const result = await startExpectingExit({ TESSERA_PORT: String(takenPort) });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${takenPort} \\(TESSERA_PORT.*already in use`))]);
  });

  it('a taken TESSERA_LEGACY_PORT: exit 1, even though the v5 listener had opened', async () => {
    const result = await startExpectingExit({ TESSERA_LEGACY_PORT: String(takenPort) });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${takenPort} \\(TESSERA_LEGACY_PORT.*already in use`))]);
  });

  it('a taken TESSERA_ADMIN_PORT: exit 1, even though the public listener had opened, one line naming the variable', async () => {
    const result = await startExpectingExit({ TESSERA_ADMIN_PORT: String(takenPort) });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${takenPort} \\(TESSERA_ADMIN_PORT, TESSERA_ADMIN_HOST\\).*already in use`)),
    ]);
  });

  it('a host that does not resolve: exit 1, one line naming the host', async () => {
    const result = await startExpectingExit({ TESSERA_HOST: 'no-such-host.invalid' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/cannot listen on no-such-host\.invalid:\d+ .*does not resolve/)]);
  });

  it('TESSERA_PORT equal to TESSERA_LEGACY_PORT: refused by configuration, exit 2, one line', async () => {
    const port = String(await freePort());
    const result = await startExpectingExit({ TESSERA_PORT: port, TESSERA_LEGACY_PORT: port });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/invalid configuration: TESSERA_LEGACY_PORT: must differ from TESSERA_PORT/)]);
  });
});
