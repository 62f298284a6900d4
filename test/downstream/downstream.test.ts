import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { freePort, startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';
import { packPublicPackages, publicPackages, repositoryRoot, run } from './public-packages.js';

/**
 * The public packages as a downstream team gets them: packed with `npm pack`, installed from the
 * tarballs into an empty project outside this workspace, and used with plain `node`. Nothing here
 * imports from the repository's sources. (readme-install.test.ts installs one the way its README says.)
 */
const { brokers } = kafkaTestEnvironment('downstream packages');
const topic = `tessera.revocations.downstream.${process.pid}.${Date.now()}`;

describe.skipIf(!brokers)('the public packages, packed and installed into an empty project', () => {
  let project: string;
  let tessera: TesseraProcess;
  let charger: Credentials;
  let viewer: Credentials;
  let app: ChildProcess | undefined;
  let appUrl: string;
  const childEnv = () => ({ ...process.env, NODE_EXTRA_CA_CERTS: join(tessera.dataDir, 'tls', 'self-signed.crt'), NODE_OPTIONS: '' });

  beforeAll(async () => {
    project = mkdtempSync(join(tmpdir(), 'tessera-downstream-'));
    const tarballs = join(project, 'tarballs');
    mkdirSync(tarballs);
    await packPublicPackages(tarballs);
    const packed = readdirSync(tarballs);
    expect(packed).toHaveLength(publicPackages.length);
    const dependencies = Object.fromEntries(
      publicPackages.map((name) => [`@tessera/${name}`, `file:${join(tarballs, packed.find((file) => file.startsWith(`tessera-${name}-`))!)}`]),
    );
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'downstream', private: true, type: 'module', dependencies: { ...dependencies, fastify: '^5.6.1', '@types/node': '^20.19.0' } }, null, 2),
    );
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: project, timeout: 240_000 });

    tessera = await startTessera({ TESSERA_KAFKA_BROKERS: brokers!, TESSERA_KAFKA_TOPIC: topic });
    charger = await tessera.createAccount({ permissions: ['transaction:charge'], name: 'downstream charger' });
    viewer = await tessera.createAccount({ permissions: [], name: 'downstream viewer' });
  }, 300_000);

  afterAll(async () => {
    app?.kill('SIGTERM');
    await tessera?.stop();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it('(a) plain node gets a token and calls the charge route through @tessera/client', async () => {
    writeFileSync(
      join(project, 'charge.mjs'),
      `import { TesseraClient } from '@tessera/client';
const client = new TesseraClient({ baseUrl: process.env.BASE, apiLoginId: process.env.LOGIN, transactionKey: process.env.KEY });
const answer = await client.fetch('/v5/Transaction/charge', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
console.log(JSON.stringify({ status: answer.status, body: await answer.json() }));
await client.close();
`,
    );
    const { stdout } = await run(process.execPath, ['charge.mjs'], {
      cwd: project,
      env: { ...childEnv(), BASE: tessera.baseUrl, LOGIN: charger.api_login_id, KEY: charger.transaction_key },
    });
    expect(JSON.parse(stdout)).toEqual({ status: 200, body: expect.objectContaining({ accepted: true, account_id: charger.account_id }) });
  });

  it('(b) a plain-JavaScript fastify app protects a route with the plugin: 200, 401, 403, and 401 once a revocation arrives through Kafka', async () => {
    const port = await freePort();
    writeFileSync(
      join(project, 'app.mjs'),
      `import Fastify from 'fastify';
import { PublicKeySet, createBearerVerifier, createKeyRefresh, loadJwks, tesseraAuth } from '@tessera/verification';
import { createKafkaFeed, startRevocationConsumer } from '@tessera/revocations';

const jwksUrl = process.env.JWKS_URL;
const keys = new PublicKeySet();
await loadJwks(jwksUrl, keys);
const revocations = await startRevocationConsumer({
  feed: createKafkaFeed({ brokers: process.env.BROKERS, topic: process.env.TOPIC }),
  onSigningKeyEvent: (event) => keys.apply(event),
});
await revocations.ready;
const verifier = createBearerVerifier({
  keys,
  projection: revocations,
  issuer: 'urn:tessera:issuer',
  now: () => Math.floor(Date.now() / 1000),
  refreshKeys: createKeyRefresh(() => loadJwks(jwksUrl, keys), { cooldownMs: 5000 }),
});
const app = Fastify();
await app.register(tesseraAuth, { verifier });
app.post('/orders', { config: { tessera: { interface: 'v5', permission: 'transaction:charge' } } }, async (request) => ({ account: request.tesseraClaims.sub }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
console.log('listening');
process.once('SIGTERM', () => revocations.close().then(() => app.close()).then(() => process.exit(0)));
`,
    );
    app = spawn(process.execPath, ['app.mjs'], {
      cwd: project,
      env: { ...childEnv(), JWKS_URL: `${tessera.baseUrl}/.well-known/jwks.json`, BROKERS: brokers!, TOPIC: topic, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    app.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    app.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await until(() => output.includes('listening') || app!.exitCode !== null, 'the downstream app to listen or exit', { timeoutMs: 60_000 });
    expect(output).toContain('listening');
    appUrl = `http://127.0.0.1:${port}`;

    const pairOf = async (account: Credentials) =>
      (await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).json() as {
        token: string;
        refresh_token: string;
      };
    const order = (token?: string) =>
      fetch(`${appUrl}/orders`, { method: 'POST', headers: token ? { authorization: `Bearer ${token}` } : {} });

    const allowed = await pairOf(charger);
    const allowedAnswer = await order(allowed.token);
    expect(allowedAnswer.status).toBe(200);
    expect(await allowedAnswer.json()).toEqual({ account: charger.account_id });

    const missing = await order();
    expect(missing.status).toBe(401);
    expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await order('not.a.token')).status).toBe(401);
    expect((await order((await pairOf(viewer)).token)).status).toBe(403);

    expect((await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: allowed.refresh_token })).status).toBe(200);
    await until(async () => (await order(allowed.token)).status, 'the revoked token refused downstream', { done: (status) => status === 401 });
  });

  it('(c) a TypeScript consumer type-checks against the shipped declarations with skipLibCheck false', async () => {
    writeFileSync(
      join(project, 'consumer.ts'),
      `import Fastify from 'fastify';
import { TesseraClient, LegacyTesseraClient } from '@tessera/client';
import { PublicKeySet, bearerCheck, createBearerVerifier, loadJwks, tesseraAuth, type AccessDecision, type BearerVerifier } from '@tessera/verification';
import { createKafkaFeed, startRevocationConsumer, type RevocationConsumer } from '@tessera/revocations';
import { PublishedEvent, type AccessTokenClaims } from '@tessera/contracts';

export async function protect(jwksUrl: string): Promise<RevocationConsumer> {
  const keys = new PublicKeySet();
  await loadJwks(jwksUrl, keys);
  const revocations = await startRevocationConsumer({ feed: createKafkaFeed({ brokers: 'localhost:9092' }) });
  const verifier = createBearerVerifier({ keys, projection: revocations, issuer: 'urn:tessera:issuer', now: () => 0 });
  const app = Fastify();
  await app.register(tesseraAuth, { verifier });
  app.get('/me', { config: { tessera: { interface: 'v5' } } }, async (request) => {
    const claims: AccessTokenClaims | undefined = request.tesseraClaims;
    return { subject: claims?.sub };
  });
  const decision: AccessDecision = await verifier.check(undefined, { interface: 'v5' });
  if (decision.status === 200) decision.claims.scope.split(' ');
  return revocations;
}

/** A server running its own per-request steps in one hook: the check joins them. */
export async function gathered(verifier: BearerVerifier): Promise<void> {
  const steps: ReturnType<typeof bearerCheck>[] = [];
  const app = Fastify();
  await app.register(tesseraAuth, { verifier, steps });
  app.addHook('onRequest', async (request, reply) => {
    for (const step of steps) if (!(await step(request, reply))) return reply;
  });
}

export const client = new TesseraClient({ baseUrl: 'https://localhost:8443', apiLoginId: 'tsl_x', transactionKey: 'tsk_x' });
export const legacy = new LegacyTesseraClient({ legacyBaseUrl: 'https://localhost:8443', apiId: 'tla_x', apiKey: 'tlk_x' });
export const parsed = PublishedEvent.safeParse({}).success;
`,
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, noEmit: true, types: ['node'] },
        files: ['consumer.ts'],
      }),
    );
    const tsc = join(repositoryRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    const checked = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project }).then(
      () => 'no errors',
      (error: { stdout: string }) => error.stdout,
    );
    expect(checked).toBe('no errors');
  });
});
