import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccountService, type CreatedAccount } from '@tessera/accounts';
import { createAdminTokenService } from '@tessera/admin-tokens';
import { ManualClock, epochSeconds } from '@tessera/timing';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * access-at against a scripted history, on the clock injected into the all-in-one as `tessera
 * start` wires it. Tokens come from the real routes, accounts from the account service, and the
 * verifier's decisions from the example protected routes; the audit index answers access-at on
 * the admin listener. At each step the answer for "now" must name exactly the tokens the verifier
 * accepts now; at the end, every past instant is asked again and must get the same answer:
 * replayed from the log, not read from current state.
 *
 * The story, in seconds after T (access tokens live 3600 s, v1 tokens 1800 s):
 *   0     family A issued                 1800  the Transaction Key is rotated (A's token lives on)
 *   600   family B issued                 2000  family C issued with the new key
 *   900   A refreshed: A#0 replaced by A#1   3000  the v1 token expires
 *   1200  a v1 token issued               4500  A#1 expires
 *   1500  B revoked                       5600  C expires
 */
const T = 1_800_000_000;
const clock = new ManualClock(T * 1000);
let tessera: InProcessAllInOne;
let account: CreatedAccount;
let accounts: ReturnType<typeof createAccountService>;
let auditToken: string;

/** Every access token handed out so far, with what its claims say. */
const issued: { token: string; kind: 'v5' | 'v1'; name: string }[] = [];
/** What access-at answered for each instant when it was "now". */
const answeredAt = new Map<number, { families: string[]; legacy: string[] }>();

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { fid?: string; gen?: number; jti: string };

async function accessAt(seconds: number): Promise<{ families: string[]; legacy: string[]; logPosition: string | null }> {
  const at = new Date(seconds * 1000).toISOString();
  const answer = await tessera.admin.inject({ method: 'GET', url: `/admin/v1/accounts/${account.accountId}/access-at?at=${at}`, headers: { authorization: `Bearer ${auditToken}` } });
  expect(answer.statusCode, answer.body).toBe(200);
  const body = answer.json<{ families: { family_id: string; generation: number }[]; legacy_tokens: { jti: string }[]; log_position: string | null }>();
  return { families: body.families.map((f) => `${f.family_id}#${f.generation}`), legacy: body.legacy_tokens.map((t) => t.jti), logPosition: body.log_position };
}

/** Whether the verifier accepts the token now: the example protected route of its interface answers 200. */
async function accepted(token: string, kind: 'v5' | 'v1'): Promise<boolean> {
  const answer =
    kind === 'v5'
      ? await tessera.app.inject({ method: 'POST', url: '/v5/Transaction/charge', payload: '{}', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } })
      : await tessera.app.inject({ method: 'GET', url: '/v1/account', headers: { authorization: `Bearer ${token}` } });
  return answer.statusCode === 200;
}

/** The clock moves to T + offset; the log has been indexed; access-at for now is what the verifier accepts now. */
async function step(offset: number, act: () => Promise<void> = async () => undefined): Promise<void> {
  clock.set((T + offset) * 1000);
  await act();
  const head = String(await tessera.store.headPosition());
  // The audit index follows the log on its own thread: wait until it reflects the head.
  await vi.waitFor(async () => expect((await accessAt(T + offset)).logPosition).toBe(head), { timeout: 15_000, interval: 50 });
  const now = { families: [] as string[], legacy: [] as string[] };
  for (const { token, kind } of issued) {
    if (!(await accepted(token, kind))) continue;
    const claims = claimsOf(token);
    if (kind === 'v5') now.families.push(`${claims.fid}#${claims.gen}`);
    else now.legacy.push(claims.jti);
  }
  const { families, legacy } = await accessAt(T + offset);
  expect({ families, legacy }, `access-at T+${offset}`).toEqual(now);
  answeredAt.set(T + offset, { families, legacy });
}

const pairs = new Map<string, { token: string; refresh_token: string }>();
async function postJson(url: string, body: unknown) {
  const answer = await tessera.app.inject({ method: 'POST', url, payload: body as Record<string, unknown> });
  expect(answer.statusCode, `${url}: ${answer.body}`).toBe(200);
  return answer.json<Record<string, unknown>>();
}
async function getToken(name: string, transactionKey = account.transactionKey): Promise<void> {
  const pair = (await postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.apiLoginId, transaction_key: transactionKey })) as { token: string; refresh_token: string };
  pairs.set(name, pair);
  issued.push({ token: pair.token, kind: 'v5', name });
}
async function refresh(from: string, name: string): Promise<void> {
  const pair = (await postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: pairs.get(from)!.refresh_token })) as { token: string; refresh_token: string };
  pairs.set(name, pair);
  issued.push({ token: pair.token, kind: 'v5', name });
}

beforeAll(async () => {
  tessera = await startInProcess({ clock, env: { TESSERA_CLOCK_SKEW: '0', TESSERA_REFRESH_TOKEN_TTL: '86400' } });
  const now = () => epochSeconds(clock);
  accounts = createAccountService({ store: tessera.store, hasher: tessera.hasher, now, actor: 'test' });
  account = await accounts.create({ name: 'Scripted', permissions: ['transaction:charge'], legacy: true });
  auditToken = (await createAdminTokenService({ store: tessera.store, hasher: tessera.hasher, now, actor: 'test' }).create({ name: 'auditor', scopes: ['audit:read'] })).adminToken;
  await tessera.caughtUp();
});
afterAll(async () => {
  expect(tessera?.fatal()).toBeUndefined();
  await tessera?.close();
});

describe('access-at over a scripted history', () => {
  it('at every step names exactly the tokens the verifier accepts at that instant, and names the same later', async () => {
    await step(0, () => getToken('A'));
    await step(600, () => getToken('B'));
    await step(900, () => refresh('A', 'A1'));
    await step(1200, async () => {
      const answer = await tessera.app.inject({
        method: 'POST',
        url: '/v1/authenticate',
        payload: `apiid=${account.legacy!.apiId}&apikey=${account.legacy!.apiKey}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(answer.statusCode).toBe(200);
      issued.push({ token: answer.json<{ result: { authentication_token: string } }>().result.authentication_token, kind: 'v1', name: 'L' });
    });
    await step(1500, async () => void (await postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: pairs.get('B')!.refresh_token })));
    let rotatedKey = '';
    await step(1800, async () => {
      rotatedKey = (await accounts.rotateKey({ accountId: account.accountId })).transactionKey;
      await tessera.caughtUp();
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
    for (const [at, answer] of answeredAt) expect(await accessAt(at), `access-at T+${at - T}, asked later`).toMatchObject(answer);
    // And at instants between the steps.
    expect((await accessAt(T + 899)).families.map(name)).toEqual(['A', 'B']);
    expect((await accessAt(T + 1499)).families.map(name)).toEqual(['B', 'A1']);
  });
});
