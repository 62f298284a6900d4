import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedGoBuild } from '../support/go-build-cache.js';
import { freePort, startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';
import { GoSignalsCli, GoSignalsServer, redact, type InboundSet } from './ssf-i2gosignals/gosignals.js';
import { startTesseraFront, type TesseraFront } from './ssf-i2gosignals/tessera-front.js';

/**
 * i2goSignals (vendored at a pinned commit in third_party/i2goSignals), a Shared Signals server
 * and CLI nobody here wrote, as the receiver of `tessera start`: its goSignals CLI makes the
 * streams at Tessera (poll and push publishers) and at its own server (a poll receiver that polls
 * Tessera, a push receiver Tessera pushes to); the server, with its in-memory store, verifies and
 * takes the SETs. What is asserted is what the server says it received: its counter of events in
 * and its log of each SET. Where the pinned CLI departs from what Tessera takes, the harness
 * works around it (ssf-i2gosignals/tessera-front.ts, and the notes below). Skips loudly without Go.
 */
const repositoryRoot = resolve(import.meta.dirname, '..', '..');
const go = spawnSync('go', ['version'], { stdio: 'ignore' }).status === 0;
if (!go) console.warn(`\n${'!'.repeat(78)}\n!! SKIPPING the i2goSignals e2e: no Go toolchain on PATH. Tessera's transmitter is NOT tried by that outside receiver in this run.\n${'!'.repeat(78)}\n`);

const sessionRevoked = 'https://schemas.openid.net/secevent/caep/event-type/session-revoked';
const credentialChange = 'https://schemas.openid.net/secevent/caep/event-type/credential-change';
const verification = 'https://schemas.openid.net/secevent/ssf/event-type/verification';

describe.skipIf(!go)('i2goSignals, its server and goSignals CLI, against the transmitter', () => {
  let tessera: TesseraProcess;
  let front: TesseraFront;
  let server: GoSignalsServer;
  let cli: GoSignalsCli;
  let issuer = '';

  beforeAll(async () => {
    const built = await cachedGoBuild({
      name: 'i2gosignals-7d75abc2beaf',
      moduleFolder: join(repositoryRoot, 'third_party', 'i2goSignals'),
      sourceFolders: [],
      binaries: { './cmd/goSignalsServer': 'goSignalsServer', './cmd/goSignals': 'goSignals' },
    });
    console.log(`i2goSignals: ${built.built ? 'built (cold)' : 'taken from the cache (warm)'} in ${built.elapsedMs.toFixed(0)} ms`);
    // TESSERA_PUBLIC_URL names the front: the URLs of Tessera's metadata, and its issuer, lead there.
    const frontPort = await freePort();
    issuer = `https://127.0.0.1:${frontPort}`;
    tessera = await startTessera({ TESSERA_EGRESS_ALLOW: 'localhost,127.0.0.1', TESSERA_PUBLIC_URL: issuer, TESSERA_SSF_POLL_WAIT: '2' });
    front = await startTesseraFront(frontPort, Number(new URL(tessera.baseUrl).port), tessera.dataDir);
    const caFile = join(tessera.dataDir, 'tls', 'self-signed.crt');
    server = new GoSignalsServer(built.paths.goSignalsServer!, await freePort(), join(tessera.dataDir, 'gosignals-server'), caFile);
    await server.ready();
    cli = new GoSignalsCli(built.paths.goSignals!, join(tessera.dataDir, 'gosignals-cli'), caFile);
    // The CLI takes a server's token only as a flag; it keeps it in its own config.json.
    await cli.run(['add', 'server', 'gs', server.url, `--token=${await server.clientToken()}`]);
  }, 600_000);
  afterAll(async () => {
    // The server first: its poll receiver retries at once when Tessera does not answer.
    server?.process.kill('SIGTERM');
    await front?.close();
    await tessera?.stop();
    if (front) console.log(`i2goSignals: the front adjusted ${JSON.stringify(front.adjustments)} (see ssf-i2gosignals/tessera-front.ts)`);
  });

  // The CLI's and the API's answers are as documented (docs/shared-signals.md, docs/interface.md): each cast names the members read.
  const receiverToken = async (name: string) => {
    const token = (JSON.parse((await tessera.tessera(['ssf-receivers', 'create', '--name', name, '--json'])).stdout) as { token: string }).token;
    await until(async () => (await tessera.request('/ssf/streams', { headers: { authorization: `Bearer ${token}` } })).status === 200, 'the receiver token to be accepted');
    return token;
  };
  const ssf = (token: string, path: string, body: unknown) =>
    tessera.request(path, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  // The goSignals CLI adds a subject by POSTing to i2goSignals' own /add-subject path, not to the
  // add_subject_endpoint of the transmitter's metadata (Tessera answers 404 there); and it has no
  // command asking a foreign transmitter for verification. The test does both with the receiver's
  // token, as the receiver's operator would with curl; what is checked is what i2goSignals received.
  const addAccount = async (token: string, streamId: string, account: string) =>
    expect((await ssf(token, '/ssf/subjects/add', { stream_id: streamId, subject: { format: 'iss_sub', iss: issuer, sub: account } })).status).toBe(200);
  const askVerification = async (token: string, streamId: string, state: string) => expect((await ssf(token, '/ssf/verify', { stream_id: streamId, state })).status).toBe(204);
  const revokeFamily = async (shop: Credentials) => {
    const pair = (await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: shop.api_login_id, transaction_key: shop.transaction_key })).json() as { refresh_token: string };
    expect((await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: pair.refresh_token })).status).toBe(200);
    return pair.refresh_token.slice('tsr_'.length).split('.')[0]!;
  };
  /** Rotates the shop's Transaction Key (ApiCredentialRevoked for the old one → credential-change); returns its API Login ID. */
  const rotateKey = async (shop: Credentials) => {
    await tessera.tessera(['accounts', 'rotate-key', '--account', shop.account_id, '--json']);
    return shop.api_login_id;
  };
  const metric = async (name: string, streamId: string) =>
    Number(new RegExp(`^${name}\\{stream_id="${streamId}"\\} (\\d+)$`, 'm').exec((await tessera.adminRequest('/metrics')).text)?.[1] ?? Number.NaN);
  const received = async (streamId: string, eventType: string, what: string, match: (set: InboundSet) => boolean = () => true): Promise<InboundSet> => {
    const found = await until(() => server.inbound().find((set) => set.streamId === streamId && set.events[eventType] !== undefined && match(set)), `i2goSignals to receive ${what}`, { timeoutMs: 30_000 }).catch((error: unknown) => {
      // The server's log as it is when the wait gives up, tokens redacted.
      throw new Error(`${String(error)} (its log: ${redact(server.logs().slice(-3000))})`);
    });
    // until() returns only a truthy answer; the check narrows the type.
    if (found.answer === undefined) throw new Error(`unreachable: until() returned no ${what}`);
    return found.answer;
  };
  const eventTypes = `--events=${sessionRevoked},${credentialChange}`;

  /** The three SETs, as i2goSignals logged them, and the counter of events in for its stream. */
  async function expectReceived(streamId: string, shop: Credentials, aud: string, actions: () => Promise<{ family: string; rotatedAway: string; state: string }>) {
    const { family, rotatedAway, state } = await actions();
    const verified = await received(streamId, verification, 'the verification SET', (set) => set.events[verification]?.state === state);
    const revoked = await received(streamId, sessionRevoked, 'the session-revoked SET');
    const changed = await received(streamId, credentialChange, 'the credential-change SET');
    const user = { format: 'iss_sub', iss: issuer, sub: shop.account_id };
    expect(verified.aud).toEqual([aud]);
    expect(revoked).toMatchObject({ aud: [aud], sub_id: { format: 'complex', user, session: { format: 'opaque', id: family } }, events: { [sessionRevoked]: { initiating_entity: 'user' } } });
    expect(changed).toMatchObject({
      aud: [aud],
      sub_id: { format: 'complex', user },
      events: { [credentialChange]: { credential_type: 'api-key', change_type: 'revoke', friendly_name: `API Login ID ${rotatedAway}` } },
    });
    expect(await server.eventsIn(streamId)).toEqual({ [verification]: 1, [sessionRevoked]: 1, [credentialChange]: 1 });
    return [verified, revoked, changed];
  }

  it('poll: the CLI makes a polled stream at Tessera and a poll receiver at its server, which takes the verification, session-revoked and credential-change SETs and acknowledges them', async () => {
    const token = await receiverToken('i2goSignals poll');
    const shop = await tessera.createAccount({ name: 'i2goSignals poll shop' });
    // The CLI takes a transmitter's token and a poll receiver's authorization only as flags (kept in its config.json, in the data folder the test removes).
    await cli.run(['add', 'server', 'tessera-poll', issuer, `--token=${token}`]);
    await cli.run(['create', 'stream', 'poll', 'publish', 'tessera-poll', '-n', 'published-poll', eventTypes]);
    const published = cli.stream('tessera-poll', 'published-poll');
    expect(published.endpoint).toBe(`${issuer}/ssf/poll?stream_id=${published.id}`);
    await cli.run([
      'create', 'stream', 'poll', 'receive', 'gs', '-n', 'receiving-poll',
      `--event-url=${published.endpoint}`, `--auth=Bearer ${token}`, `--iss=${issuer}`, `--aud=${published.aud}`, `--iss-jwks-url=${issuer}/.well-known/jwks.json`, '--events=*',
    ]);
    const receiving = cli.stream('gs', 'receiving-poll');

    const sets = await expectReceived(receiving.id, shop, published.aud, async () => {
      await addAccount(token, published.id, shop.account_id);
      const state = `i2goSignals-poll-${randomBytes(6).toString('hex')}`;
      await askVerification(token, published.id, state);
      return { state, family: await revokeFamily(shop), rotatedAway: await rotateKey(shop) };
    });

    // Acknowledged: nothing pending at Tessera, each SET handled once, and a poll answered after the last of them.
    await until(() => metric('tessera_ssf_pending_sets', published.id), `stream ${published.id} to have no pending SET`, { done: (pending) => pending === 0 });
    expect(await metric('tessera_ssf_delivered_total', published.id)).toBe(3);
    const handledAt = (jti: string) => server.pollLog(receiving.id).filter((line) => line.includes('msg="POLL-RCV: Handling Event"') && line.includes(`jti=${jti}`)).length;
    const lastHandled = Math.max(...sets.map((set) => server.pollLog(receiving.id).findIndex((line) => line.includes(`jti=${set.jti}`))));
    await until(() => server.pollLog(receiving.id).slice(lastHandled + 1).some((line) => line.includes('msg="POLL-RCV: Response received"') && line.includes('setCnt=0')), 'an empty poll answer after the last SET');
    expect(sets.map((set) => handledAt(set.jti))).toEqual([1, 1, 1]);
  }, 120_000);

  it('push: the CLI makes a push receiver at its server and a push stream at Tessera to it; the server verifies and takes the three SETs (and refuses a forged one)', async () => {
    const token = await receiverToken('i2goSignals push');
    const shop = await tessera.createAccount({ name: 'i2goSignals push shop' });
    await cli.run(['add', 'server', 'tessera-push', issuer, `--token=${token}`]);
    await cli.run(['create', 'stream', 'push', 'receive', 'gs', '-n', 'receiving-push', `--iss=${issuer}`, `--iss-jwks-url=${issuer}/.well-known/jwks.json`, '--events=*']);
    const receiving = cli.stream('gs', 'receiving-push');
    expect(receiving.endpoint).toBe(`${server.url}/events/${receiving.id}`);
    // The push stream at Tessera carries the receiver stream's bearer token as its authorization header.
    await cli.run(['create', 'stream', 'push', 'publish', 'tessera-push', '-n', 'published-push', `--event-url=${receiving.endpoint}`, `--auth=${receiving.token}`, eventTypes]);
    const published = cli.stream('tessera-push', 'published-push');

    await expectReceived(receiving.id, shop, receiving.endpoint, async () => {
      await addAccount(token, published.id, shop.account_id);
      const state = `i2goSignals-push-${randomBytes(6).toString('hex')}`;
      await askVerification(token, published.id, state);
      return { state, family: await revokeFamily(shop), rotatedAway: await rotateKey(shop) };
    });
    await until(() => metric('tessera_ssf_pending_sets', published.id), `stream ${published.id} to have no pending SET`, { done: (pending) => pending === 0 });
    expect(await metric('tessera_ssf_delivered_total', published.id)).toBe(3);

    // The server checks signatures: a SET as Tessera would write it, under Tessera's kid, with a
    // signature that is not Tessera's, is refused (were the JWKS not loaded, it would be taken).
    const kid = ((await tessera.request('/.well-known/jwks.json')).json() as { keys: { kid: string }[] }).keys[0]!.kid;
    const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const forged = [
      segment({ alg: 'ES256', typ: 'secevent+jwt', kid }),
      segment({ iss: issuer, aud: receiving.endpoint, iat: Math.floor(Date.now() / 1000), jti: 'forged', sub_id: { format: 'complex', user: { format: 'iss_sub', iss: issuer, sub: shop.account_id } }, events: { [sessionRevoked]: { event_timestamp: 1 } } }),
      randomBytes(64).toString('base64url'),
    ].join('.');
    const refused = await fetch(receiving.endpoint, { method: 'POST', headers: { authorization: receiving.token, 'content-type': 'application/secevent+jwt' }, body: forged });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { err: string }).err).toBe('invalid_request');
    expect((await server.eventsIn(receiving.id))[sessionRevoked]).toBe(1);
  }, 120_000);
});
