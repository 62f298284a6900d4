import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createAccountService, type CreatedAccount } from '@tessera/accounts';
import { signingKeyEventTypes, type SigningKeyEvent } from '@tessera/contracts';
import { InMemoryEventStore, followLog, type LogReader, type Subscription } from '@tessera/event-store';
import { SigningKeyring, createTokenService } from '@tessera/issuer';
import { buildApp, createMetrics, createReadiness } from '@tessera/server';
import { KeyFolder, createSecretHasher } from '@tessera/tokens';
import { createBearerVerifier, type BearerVerifier } from '@tessera/verification';
import { createVerifierState } from '@tessera/verifier';
import { AuditIndex } from './audit-index.js';
import { auditRoutes } from './audit-routes.js';
import { followIntoIndex, type IndexFollower } from './index-follower.js';

/**
 * Issue 12, point 3: access-at against a scripted history on an injected clock. The real token
 * service and account service write the log, the real verifier decides on the real tokens, and
 * the audit index answers access-at over HTTP (inject()). At each step the answer for "now" must
 * name exactly the tokens the verifier accepts now; at the end, every past instant is asked again
 * and must get the same answer: replayed from the log, not read from current state.
 *
 * The story, in seconds after T (access tokens live 3600 s, v1 tokens 1800 s):
 *   0     family A issued                 1800  the Transaction Key is rotated (A's token lives on)
 *   600   family B issued                 2000  family C issued with the new key
 *   900   A refreshed: A#0 replaced by A#1   3000  the v1 token expires
 *   1200  a v1 token issued               4500  A#1 expires
 *   1500  B revoked                       5600  C expires
 */
const T = 1_800_000_000;
const issuer = 'urn:tessera:test';
const hasher = createSecretHasher(Buffer.alloc(32, 7));
let clock = T;
let keysDir: string;
let store: InMemoryEventStore;
let following: Subscription;
let follower: IndexFollower;
let index: AuditIndex;
let app: FastifyInstance;
let bearer: BearerVerifier;
let account: CreatedAccount;
let tokens: ReturnType<typeof createTokenService>;
let accounts: ReturnType<typeof createAccountService>;
let directory: ReturnType<typeof createVerifierState>['accounts'];
const failures: unknown[] = [];

/** Every access token handed out so far, with what its claims say. */
const issued: { token: string; kind: 'v5' | 'v1'; name: string }[] = [];
/** What access-at answered for each instant when it was "now". */
const answeredAt = new Map<number, { families: string[]; legacy: string[] }>();

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { fid?: string; gen?: number; jti: string };
const metadata = { requestId: 'req', sourceAddress: '127.0.0.1' };

async function accessAt(seconds: number): Promise<{ families: string[]; legacy: string[] }> {
  const at = new Date(seconds * 1000).toISOString();
  const answer = await app.inject({ method: 'GET', url: `/admin/v1/accounts/${account.accountId}/access-at?at=${at}`, headers: { authorization: 'Bearer stand-in' } });
  expect(answer.statusCode).toBe(200);
  const body = answer.json<{ families: { family_id: string; generation: number }[]; legacy_tokens: { jti: string }[] }>();
  return { families: body.families.map((f) => `${f.family_id}#${f.generation}`), legacy: body.legacy_tokens.map((t) => t.jti) };
}

/** The clock moves to T + offset; the log has been indexed; access-at for now is what the verifier accepts now. */
async function step(offset: number, act: () => Promise<void> = async () => undefined): Promise<void> {
  clock = T + offset;
  await act();
  const head = await store.headPosition();
  await vi.waitFor(() => expect(index.position()).toBe(head));
  const accepted = { families: [] as string[], legacy: [] as string[] };
  for (const { token, kind } of issued) {
    if (bearer.decide(`Bearer ${token}`, { interface: kind }).status !== 200) continue;
    const claims = claimsOf(token);
    if (kind === 'v5') accepted.families.push(`${claims.fid}#${claims.gen}`);
    else accepted.legacy.push(claims.jti);
  }
  const answer = await accessAt(clock);
  expect(answer, `access-at T+${offset}`).toEqual(accepted);
  answeredAt.set(clock, answer);
}

const pairs = new Map<string, { accessToken: string; refreshToken: string }>();
async function getToken(name: string, transactionKey = account.transactionKey): Promise<void> {
  const pair = await tokens.getToken(account.apiLoginId, transactionKey, metadata);
  pairs.set(name, pair);
  issued.push({ token: pair.accessToken, kind: 'v5', name });
}
async function refresh(from: string, name: string): Promise<void> {
  const pair = await tokens.refreshToken(pairs.get(from)!.refreshToken, metadata);
  pairs.set(name, pair);
  issued.push({ token: pair.accessToken, kind: 'v5', name });
}

beforeAll(async () => {
  keysDir = mkdtempSync(join(tmpdir(), 'tessera-access-at-'));
  store = new InMemoryEventStore({ now: () => clock * 1000 });
  const verifier = createVerifierState({ clockSkewSeconds: 0 });
  directory = verifier.accounts;
  const keyring = new SigningKeyring(new KeyFolder(keysDir));
  const now = () => clock;
  tokens = createTokenService({
    store,
    directory: verifier.accounts,
    keyring,
    hasher,
    issuer,
    lifetimes: { accessTokenSeconds: 3600, refreshTokenSeconds: 86_400, legacyTokenSeconds: 1800 },
    now,
    onFamilyEvent: verifier.applyFamilyEvent,
  });
  accounts = createAccountService({ store, hasher, now, actor: 'test' });
  bearer = createBearerVerifier({ keys: verifier.keys, projection: verifier.projection, issuer, now, clockSkewSeconds: 0 });
  const keyringReader: LogReader = { types: signingKeyEventTypes, apply: ({ event }) => keyring.apply(event as SigningKeyEvent) };
  following = followLog(store, [keyringReader, ...verifier.readers, verifier.revocationReader], (error) => failures.push(error));
  index = AuditIndex.open(':memory:');
  follower = followIntoIndex(store, index, { flushDelayMs: 1, onError: (error) => failures.push(error) });
  app = await buildApp({
    logLevel: 'silent',
    readiness: createReadiness(),
    metrics: createMetrics(),
    // The admin-token check is another package's; this test lets every request through.
    routes: [auditRoutes({ audit: { unavailable: () => undefined, events: (q) => index.events(q), accessAt: (id, at) => index.accessAt(id, at) }, requireScope: () => async () => undefined, now: () => clock * 1000 })],
  });
  await keyring.ensureKey(store, clock);
  account = await accounts.create({ name: 'Scripted', permissions: ['transaction:charge'], legacy: true });
  await vi.waitFor(() => {
    if (!directory.apiCredential(account.apiLoginId) || !keyring.ready) throw new Error('read models are not caught up yet');
  });

});
afterAll(async () => {
  await app?.close();
  await follower?.close();
  await following?.close();
  index?.close();
  await store?.close();
  rmSync(keysDir, { recursive: true, force: true });
  expect(failures).toEqual([]);
});

describe('access-at over a scripted history', () => {
  it('at every step names exactly the tokens the verifier accepts at that instant, and names the same later', async () => {
    await step(0, () => getToken('A'));
    await step(600, () => getToken('B'));
    await step(900, () => refresh('A', 'A1'));
    await step(1200, async () => {
      const legacy = await tokens.legacyAuthenticate(account.legacy!.apiId, account.legacy!.apiKey, metadata);
      issued.push({ token: legacy.authenticationToken, kind: 'v1', name: 'L' });
    });
    await step(1500, async () => void (await tokens.revokeToken(pairs.get('B')!.refreshToken, metadata)));
    let rotatedKey = '';
    await step(1800, async () => {
      const before = directory.apiCredential(account.apiLoginId)?.credentialId;
      rotatedKey = (await accounts.rotateKey({ accountId: account.accountId })).transactionKey;
      await vi.waitFor(() => expect(directory.apiCredential(account.apiLoginId)?.credentialId).not.toBe(before));
    });
    await step(2000, () => getToken('C', rotatedKey));
    for (const offset of [2999, 3000, 4499, 4500, 5599, 5600, 9000]) await step(offset);

    // The story, by name: each instant's answer, as the verifier gave it then.
    const name = (entry: string) => issued.find(({ token, kind }) => kind === 'v5' && `${claimsOf(token).fid}#${claimsOf(token).gen}` === entry)?.name;
    const story = [...answeredAt].map(([at, answer]) => [at - T, answer.families.map(name), answer.legacy.length]);
    expect(story).toEqual([
      [0, ['A'], 0],
      [600, ['A', 'B'], 0],
      [900, ['B', 'A1'], 0],
      [1200, ['B', 'A1'], 1],
      [1500, ['A1'], 1],
      [1800, ['A1'], 1],
      [2000, ['A1', 'C'], 1],
      [2999, ['A1', 'C'], 1],
      [3000, ['A1', 'C'], 0],
      [4499, ['A1', 'C'], 0],
      [4500, ['C'], 0],
      [5599, ['C'], 0],
      [5600, [], 0],
      [9000, [], 0],
    ]);
    // Long after, with every token expired, the past is answered as it was then.
    for (const [at, answer] of answeredAt) expect(await accessAt(at), `access-at T+${at - T}, asked later`).toEqual(answer);
    // And at instants between the steps.
    expect((await accessAt(T + 899)).families.map(name)).toEqual(['A', 'B']);
    expect((await accessAt(T + 1499)).families.map(name)).toEqual(['B', 'A1']);
  });
});
