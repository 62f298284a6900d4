import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { freePort, startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';
import {
  manifestOf,
  markedBlock,
  packPublicPackages,
  publicPackages,
  readmeOf,
  requiredPeers,
  run,
  tarballsNamed,
  tesseraClosure,
} from './public-packages.js';

/**
 * Each package README is the one place that says how to install the package. Its `.npmrc`
 * block (marked `<!-- downstream-npmrc -->`) maps the @tessera scope to a registry that does not
 * exist, and its install command (marked `<!-- downstream-install -->`) names the tarballs; so an
 * install that misses a Tessera package fails instead of fetching a look-alike from the public
 * registry. Nothing here lists the packages: they come from the READMEs and the package.json files.
 */
describe("every public package's README", () => {
  it.each(publicPackages)('@tessera/%s: the install command names the Tessera packages it needs, transitively, each at its version, and its peers', (name) => {
    const readme = readmeOf(name);
    const command = markedBlock(readme, 'downstream-install');
    const named = tarballsNamed(command);
    expect(named.map((tarball) => tarball.name).sort()).toEqual(tesseraClosure(name).sort());
    for (const tarball of named) expect(tarball.version, `@tessera/${tarball.name}`).toBe(manifestOf(tarball.name).version);
    for (const peer of requiredPeers(tesseraClosure(name))) expect(command).toMatch(new RegExp(`(^|\\s)${peer}@`));
    expect(markedBlock(readme, 'downstream-npmrc').trim()).toMatch(/^@tessera:registry=https:\/\/\S+$/);
  });
});

describe('@tessera/verification, installed into an empty project exactly as its README says', () => {
  let project: string;
  let tessera: TesseraProcess;
  let charger: Credentials;
  let viewer: Credentials;

  beforeAll(async () => {
    project = mkdtempSync(join(tmpdir(), 'tessera-readme-install-'));
    // Every public package is packed: the README's command must pick out the ones it needs.
    mkdirSync(join(project, 'vendor'));
    await packPublicPackages(join(project, 'vendor'));
    // A port and public URL of its own: the Shared Signals metadata names its endpoints under TESSERA_PUBLIC_URL.
    const port = await freePort();
    tessera = await startTessera({ TESSERA_PORT: String(port), TESSERA_PUBLIC_URL: `https://localhost:${port}` });
    charger = await tessera.createAccount({ permissions: ['transaction:charge'], name: 'readme charger' });
    viewer = await tessera.createAccount({ permissions: [], name: 'readme viewer' });
  }, 300_000);

  afterAll(async () => {
    await tessera?.stop();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it("the README's .npmrc and install command install it and the Tessera packages it needs, and nothing else of Tessera's", async () => {
    const readme = readmeOf('verification');
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'readme-install', private: true, type: 'module' }));
    writeFileSync(join(project, '.npmrc'), markedBlock(readme, 'downstream-npmrc'));
    // As a user's shell runs it: none of the npm_config_* variables npx hands this process. Two
    // settings change only how fast it goes: no retries, so a missing tarball fails in seconds
    // rather than minutes, and the local cache first for fastify and its dependencies.
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_(config|package)_/i.test(key)));
    const installed = await run('sh', ['-e', '-c', markedBlock(readme, 'downstream-install')], {
      cwd: project,
      env: { ...env, npm_config_fetch_retries: '0', npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' },
      timeout: 240_000,
    }).then(
      () => 'installed',
      (error: { stderr?: string }) => `failed: ${(error.stderr ?? '').split('\n').filter((line) => line.startsWith('npm error')).slice(0, 4).join(' | ')}`,
    );
    expect(installed).toBe('installed');
    expect(readdirSync(join(project, 'node_modules', '@tessera')).sort()).toEqual(tesseraClosure('verification').sort());
  });

  it('plain node protects a fastify route with it: 200 with the permission, 403 without, 401 without a valid token', async () => {
    writeFileSync(
      join(project, 'protect.mjs'),
      `import Fastify from 'fastify';
import { PublicKeySet, RevocationProjection, createBearerVerifier, loadJwks, tesseraAuth } from '@tessera/verification';

const keys = new PublicKeySet();
await loadJwks(process.env.JWKS_URL, keys);
const verifier = createBearerVerifier({
  keys,
  projection: new RevocationProjection(),
  issuer: 'urn:tessera:issuer',
  now: () => Math.floor(Date.now() / 1000),
});
const app = Fastify();
await app.register(tesseraAuth, { verifier });
app.post('/orders', { config: { tessera: { interface: 'v5', permission: 'transaction:charge' } } }, async (request) => ({ account: request.tesseraClaims.sub }));
const order = async (token) => {
  const answer = await app.inject({ method: 'POST', url: '/orders', headers: token ? { authorization: 'Bearer ' + token } : {} });
  return { status: answer.statusCode, type: answer.headers['content-type'], body: answer.json() };
};
console.log(JSON.stringify({
  allowed: await order(process.env.CHARGER_TOKEN),
  forbidden: await order(process.env.VIEWER_TOKEN),
  missing: await order(undefined),
  garbage: await order('not.a.token'),
}));
await app.close();
`,
    );
    const tokenOf = async (account: Credentials) =>
      ((await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).json() as { token: string })
        .token;
    const { stdout } = await run(process.execPath, ['protect.mjs'], {
      cwd: project,
      env: {
        PATH: process.env.PATH,
        NODE_EXTRA_CA_CERTS: join(tessera.dataDir, 'tls', 'self-signed.crt'),
        JWKS_URL: `${tessera.baseUrl}/.well-known/jwks.json`,
        CHARGER_TOKEN: await tokenOf(charger),
        VIEWER_TOKEN: await tokenOf(viewer),
      },
    });
    const answers = JSON.parse(stdout) as Record<string, { status: number; type: string; body: unknown }>;
    expect(answers.allowed).toMatchObject({ status: 200, body: { account: charger.account_id } });
    expect(answers.forbidden).toMatchObject({ status: 403, type: expect.stringMatching(/^application\/problem\+json/) });
    expect(answers.missing).toMatchObject({ status: 401, type: expect.stringMatching(/^application\/problem\+json/) });
    expect(answers.garbage?.status).toBe(401);
  });

  it('installed without its peers (npm --omit=peer, no fastify), it loads, and its Shared Signals receiver hears a revocation by polling', async () => {
    // Outside `project`, whose node_modules has fastify: Node would find it there, walking up.
    const bare = mkdtempSync(join(tmpdir(), 'tessera-without-fastify-'));
    onTestFinished(() => rmSync(bare, { recursive: true, force: true }));
    writeFileSync(join(bare, 'package.json'), JSON.stringify({ name: 'without-fastify', private: true, type: 'module' }));
    writeFileSync(join(bare, '.npmrc'), markedBlock(readmeOf('verification'), 'downstream-npmrc'));
    const tarballs = tesseraClosure('verification').map((name) => join(project, 'vendor', `tessera-${name}-${manifestOf(name).version}.tgz`));
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_(config|package)_/i.test(key)));
    await run('npm', ['install', '--omit=peer', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs], { cwd: bare, env, timeout: 240_000 });
    expect(existsSync(join(bare, 'node_modules', 'fastify'))).toBe(false);
    writeFileSync(
      join(bare, 'receive.mjs'),
      `const fastify = await import('fastify').then(() => 'found', (error) => error.code);
import { createSsfReceiver, ssfPushHandler } from '@tessera/verification';
const receiver = createSsfReceiver({
  transmitterUrl: process.env.TRANSMITTER_URL,
  receiverToken: process.env.RECEIVER_TOKEN,
  delivery: { method: 'poll' },
  subjects: { accounts: [process.env.ACCOUNT_ID] },
});
await receiver.ready;
console.log(JSON.stringify({ fastify, pushHandler: typeof ssfPushHandler(receiver), ready: true }));
while (receiver.projection.size === 0) await new Promise((resolve) => setTimeout(resolve, 20));
console.log(JSON.stringify({ applied: receiver.projection.size }));
await receiver.close();
`,
    );
    const receiverToken = (JSON.parse((await tessera.tessera(['ssf-receivers', 'create', '--name', 'no fastify', '--json'])).stdout) as { token: string }).token;
    await until(async () => (await tessera.request('/ssf/streams', { headers: { authorization: `Bearer ${receiverToken}` } })).status === 200, 'the receiver token to be accepted');
    const child = spawn(process.execPath, ['receive.mjs'], {
      cwd: bare,
      env: { PATH: process.env.PATH, NODE_EXTRA_CA_CERTS: join(tessera.dataDir, 'tls', 'self-signed.crt'), TRANSMITTER_URL: tessera.baseUrl, RECEIVER_TOKEN: receiverToken, ACCOUNT_ID: charger.account_id },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolveExit) => child.once('exit', resolveExit));
    await until(() => output.includes('"ready":true') || child.exitCode !== null, 'the receiver to be ready', { timeoutMs: 30_000 });
    expect(JSON.parse(output.split('\n')[0]!)).toEqual({ fastify: 'ERR_MODULE_NOT_FOUND', pushHandler: 'function', ready: true });
    const pair = (await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: charger.api_login_id, transaction_key: charger.transaction_key })).json() as { refresh_token: string };
    expect((await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: pair.refresh_token })).status).toBe(200);
    expect(await exited, output).toBe(0);
    expect(output).toContain('{"applied":1}');
  });
});
