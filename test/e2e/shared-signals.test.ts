import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/**
 * The Shared Signals transmitter end to end, against an independent receiver written in Python
 * (test/e2e/ssf-receiver/receiver.py: http.server over TLS, PyJWT and PyJWKClient, no Tessera
 * code), which verifies every SET it gets: signature against the JWKS, typ, iss, aud, jti
 * uniqueness and the CAEP event's shape, pushed (RFC 8935) and polled (RFC 8936). Tessera runs as
 * `tessera start`; the receiver token comes from the CLI, streams are made with HTTPS requests.
 * Skips loudly without python3 and PyJWT with its crypto extra; .ci/run installs them.
 */
const script = resolve(import.meta.dirname, 'ssf-receiver', 'receiver.py');
const pyjwt = spawnSync('python3', ['-c', 'import jwt, cryptography'], { stdio: 'ignore' }).status === 0;
if (!pyjwt) console.warn(`\n${'!'.repeat(78)}\n!! SKIPPING Shared Signals e2e: python3 with "pyjwt[crypto]" is not installed (pip install "pyjwt[crypto]"). SETs are NOT checked by an independent receiver in this run.\n${'!'.repeat(78)}\n`);

interface Receipt {
  readonly ok: boolean;
  readonly error?: string;
  readonly jti?: string;
  readonly txn?: string;
  readonly type?: string;
  readonly duplicate: boolean;
  readonly sub_id?: { format: string; id?: string; session?: { id: string }; user?: { sub: string } };
  readonly event?: Record<string, unknown>;
}

const SESSION_REVOKED = 'https://schemas.openid.net/secevent/caep/event-type/session-revoked';
const TOKEN_ROTATED = 'urn:tessera:secevent:token-rotated';

describe.skipIf(!pyjwt)('the Shared Signals transmitter, verified by an independent Python receiver', () => {
  let work = '';
  let dataDir = '';
  let certFile = '';
  let keyFile = '';
  let port = 0;
  let publicUrl = '';
  let tessera: TesseraProcess;
  let env: Record<string, string>;
  let account: Credentials;
  let receiverToken = '';
  const receivers: ChildProcess[] = [];
  const blackHoles: { server: Server; sockets: Set<Socket> }[] = [];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'tessera-ssf-e2e-'));
    dataDir = join(work, 'data');
    certFile = join(dataDir, 'tls', 'self-signed.crt');
    keyFile = join(dataDir, 'tls', 'self-signed.key');
    // One certificate for Tessera's listener and the receivers': Tessera trusts it as a private CA (NODE_EXTRA_CA_CERTS).
    mkdirSync(join(dataDir, 'tls'), { recursive: true, mode: 0o700 });
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] }],
    });
    writeFileSync(keyFile, pems.private, { mode: 0o600 });
    writeFileSync(certFile, pems.cert);
    port = await freePort();
    publicUrl = `https://localhost:${port}`;
    // The receivers listen on this machine's loopback, which the egress policy refuses unless named.
    env = { TESSERA_PORT: String(port), TESSERA_PUBLIC_URL: publicUrl, NODE_EXTRA_CA_CERTS: certFile, TESSERA_SSF_PUSH_TIMEOUT: '2', TESSERA_SSF_POLL_WAIT: '2', TESSERA_EGRESS_ALLOW: 'localhost' };
    tessera = await startTessera(env, { dataDir, keepData: true });
    account = await tessera.createAccount();
    receiverToken = JSON.parse((await tessera.tessera(['ssf-receivers', 'create', '--name', 'Python receiver', '--json'])).stdout).token as string;
    await until(async () => (await streamsRequest('GET', '/ssf/streams')).status === 200, 'the receiver token to be accepted');
  });
  afterAll(async () => {
    for (const child of receivers) child.kill('SIGKILL');
    for (const { server, sockets } of blackHoles) {
      for (const socket of sockets) socket.destroy();
      server.close();
    }
    await tessera?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const streamsRequest = (method: string, path: string, body?: unknown) =>
    tessera.request(path, {
      method,
      headers: { authorization: `Bearer ${receiverToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  async function pushStream(endpoint: string): Promise<{ streamId: string; aud: string }> {
    const created = await streamsRequest('POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: endpoint, authorization_header: 'Bearer receiver-own-secret' } });
    expect(created.status).toBe(201);
    const { stream_id: streamId, aud } = created.json() as { stream_id: string; aud: string };
    expect((await streamsRequest('POST', '/ssf/subjects/add', { stream_id: streamId, subject: { format: 'iss_sub', iss: publicUrl, sub: account.account_id } })).status).toBe(200);
    return { streamId, aud };
  }

  /** The Python push receiver on `receiverPort`, recording to `record`; resolves once it listens. */
  async function startPushReceiver(receiverPort: number, record: string, audience: string, delayMs = 0): Promise<ChildProcess> {
    const child = spawn(
      'python3',
      [script, 'push', '--port', String(receiverPort), '--cert', certFile, '--key', keyFile, '--jwks', `${publicUrl}/.well-known/jwks.json`, '--ca', certFile, '--issuer', publicUrl, '--audience', audience, '--record', record, '--delay-ms', String(delayMs)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    receivers.push(child);
    let output = '';
    await new Promise<void>((resolveListening, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('listening')) resolveListening();
      });
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code) => reject(new Error(`receiver.py exited (${code}): ${output}`)));
    });
    return child;
  }

  const receipts = (record: string): Receipt[] => (existsSync(record) ? readFileSync(record, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Receipt) : []);
  const sessionsIn = (record: string) => new Set(receipts(record).filter((receipt) => receipt.type === SESSION_REVOKED).map((receipt) => receipt.sub_id!.session!.id));

  /** A family of the account, revoked with revoke-oauth-token: its id is the SET's session subject. */
  async function revokeFamily(): Promise<string> {
    const pair = await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
    expect(pair.status).toBe(200);
    const refreshToken = (pair.json() as { refresh_token: string }).refresh_token;
    expect((await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: refreshToken })).status).toBe(200);
    return refreshToken.slice('tsr_'.length).split('.')[0]!;
  }

  /** Every SET verified; each event (txn) under one jti, and no jti shared by two events. */
  function expectVerifiedAndDeduplicable(record: string): void {
    const all = receipts(record);
    expect(all.filter((receipt) => !receipt.ok)).toEqual([]);
    const jtiByTxn = new Map<string, Set<string>>();
    for (const receipt of all) jtiByTxn.set(receipt.txn!, new Set([...(jtiByTxn.get(receipt.txn!) ?? []), receipt.jti!]));
    for (const [txn, jtis] of jtiByTxn) expect(jtis.size, `txn ${txn}`).toBe(1);
    expect(new Set([...jtiByTxn.values()].map((jtis) => [...jtis][0])).size).toBe(jtiByTxn.size);
    // A duplicate is flagged only for a jti seen before: the receiver deduplicates by jti.
    for (const receipt of all.filter((r) => r.duplicate)) expect(all.some((r) => r !== receipt && r.jti === receipt.jti)).toBe(true);
  }

  it('pushes CAEP SETs that the receiver verifies: session-revoked, credential-change, token-claims-change, and the verification event with its state', async () => {
    const receiverPort = await freePort();
    const record = join(work, 'push.jsonl');
    const endpoint = `https://localhost:${receiverPort}/events`;
    const { streamId, aud } = await pushStream(endpoint);
    expect(aud).toBe(endpoint);
    await startPushReceiver(receiverPort, record, aud);
    const family = await revokeFamily();
    await tessera.tessera(['accounts', 'set-permissions', '--account', account.account_id, '--permission', 'transaction:charge', '--permission', 'transaction:refund']);
    await tessera.tessera(['accounts', 'rotate-key', '--account', account.account_id, '--json']).then(({ stdout }) => {
      account = { ...account, transaction_key: (JSON.parse(stdout) as { transaction_key: string }).transaction_key, api_login_id: (JSON.parse(stdout) as { api_login_id: string }).api_login_id };
    });
    // The server follows the log: the new key works within a poll (each miss is one of the credential's 10 failures).
    await until(async () => (await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).status === 200, 'the rotated key', { timeoutMs: 1_500 });
    expect((await streamsRequest('POST', '/ssf/verify', { stream_id: streamId, state: 'state-from-python' })).status).toBe(204);
    await until(() => receipts(record).length >= 4, 'four SETs');
    expectVerifiedAndDeduplicable(record);
    const byType = Object.fromEntries(receipts(record).map((receipt) => [receipt.type, receipt]));
    expect(byType[SESSION_REVOKED]!.sub_id).toMatchObject({ format: 'complex', user: { sub: account.account_id }, session: { id: family } });
    expect(byType['https://schemas.openid.net/secevent/caep/event-type/token-claims-change']!.event).toMatchObject({ claims: { scope: 'transaction:charge transaction:refund' } });
    expect(byType['https://schemas.openid.net/secevent/caep/event-type/credential-change']!.event).toMatchObject({ credential_type: 'api-key', change_type: 'revoke' });
    expect(byType['https://schemas.openid.net/secevent/ssf/event-type/verification']!.event).toEqual({ state: 'state-from-python' });
    const metrics = (await tessera.adminRequest('/metrics')).text;
    expect(metrics).toMatch(new RegExp(`^tessera_ssf_delivered_total\\{stream_id="${streamId}"\\} [1-9]`, 'm'));
    expect(metrics).toMatch(new RegExp(`^tessera_ssf_pending_sets\\{stream_id="${streamId}"\\} 0$`, 'm'));
  });

  it('delivers a polled stream: the Python poller verifies each SET and acknowledges it', async () => {
    const created = await streamsRequest('POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } });
    const { stream_id: streamId, aud, delivery } = created.json() as { stream_id: string; aud: string; delivery: { endpoint_url: string } };
    await streamsRequest('POST', '/ssf/subjects/add', { stream_id: streamId, subject: { format: 'iss_sub', iss: publicUrl, sub: account.account_id } });
    const families = [await revokeFamily(), await revokeFamily(), await revokeFamily()];
    const tokenFile = join(work, 'poll-token');
    writeFileSync(tokenFile, receiverToken, { mode: 0o600 });
    const record = join(work, 'poll.jsonl');
    const run = spawnSync(
      'python3',
      [script, 'poll', '--poll-url', delivery.endpoint_url, '--token-file', tokenFile, '--jwks', `${publicUrl}/.well-known/jwks.json`, '--ca', certFile, '--issuer', publicUrl, '--audience', aud, '--record', record, '--expect', '3', '--timeout', '30'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    expectVerifiedAndDeduplicable(record);
    expect(sessionsIn(record)).toEqual(new Set(families));
    // Acknowledged: nothing is left to poll.
    const left = await tessera.request(`/ssf/poll?stream_id=${streamId}`, { method: 'POST', headers: { authorization: `Bearer ${receiverToken}`, 'content-type': 'application/json' }, body: '{"returnImmediately":true}' });
    expect(left.json()).toEqual({ sets: {}, moreAvailable: false });
  });

  it('sends a refresh as a token-rotated SET, with the generation now valid, only to a stream that asked for it by name', async () => {
    const poll = async (streamId: string) => {
      for (;;) {
        const answer = await tessera.request(`/ssf/poll?stream_id=${streamId}`, { method: 'POST', headers: { authorization: `Bearer ${receiverToken}`, 'content-type': 'application/json' }, body: '{"returnImmediately":true}' });
        // An empty poll that returns at once is refused within TESSERA_SSF_EMPTY_POLL_INTERVAL of the last: asked again after its Retry-After, as a receiver does.
        if (answer.status !== 429) return answer;
        await new Promise((resolve) => setTimeout(resolve, Number(answer.headers['retry-after']) * 1000));
      }
    };
    const follow = async (eventsRequested?: string[]) => {
      const created = await streamsRequest('POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' }, ...(eventsRequested ? { events_requested: eventsRequested } : {}) });
      const { stream_id: streamId, events_delivered: delivered } = created.json() as { stream_id: string; events_delivered: string[] };
      expect((await streamsRequest('POST', '/ssf/subjects/add', { stream_id: streamId, subject: { format: 'iss_sub', iss: publicUrl, sub: account.account_id } })).status).toBe(200);
      return { streamId, delivered };
    };
    const asking = await follow([TOKEN_ROTATED, SESSION_REVOKED]);
    const byDefault = await follow();
    expect(asking.delivered).toEqual([SESSION_REVOKED, TOKEN_ROTATED]);
    expect(byDefault.delivered).not.toContain(TOKEN_ROTATED);
    const pair = await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
    const refreshToken = (pair.json() as { refresh_token: string }).refresh_token;
    const familyId = refreshToken.slice('tsr_'.length).split('.')[0]!;
    const refreshed = await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: refreshToken });
    expect(refreshed.status).toBe(200);
    const claimsOf = (set: string) => JSON.parse(Buffer.from(set.split('.')[1]!, 'base64url').toString('utf8')) as { sub_id: { session?: { id: string } }; events: Record<string, Record<string, unknown>> };
    let rotations: ReturnType<typeof claimsOf>[] = [];
    await until(async () => {
      const answer = poll(asking.streamId);
      rotations = Object.values(((await answer).json() as { sets: Record<string, string> }).sets).map(claimsOf).filter((claims) => TOKEN_ROTATED in claims.events);
      return rotations.length > 0;
    }, 'the token-rotated SET');
    expect(rotations).toHaveLength(1);
    expect(rotations[0]!.sub_id.session).toEqual({ format: 'opaque', id: familyId });
    expect(rotations[0]!.events[TOKEN_ROTATED]).toMatchObject({ generation: 1, tessera_rejects_until: expect.any(Number), event_timestamp: expect.any(Number) });
    // The stream that named no types got nothing for the refresh; a revocation after it reaches it, so it was read past the rotation.
    expect((await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: (refreshed.json() as { refresh_token: string }).refresh_token })).status).toBe(200);
    const seen = new Set<string>();
    await until(async () => {
      for (const set of Object.values(((await poll(byDefault.streamId)).json() as { sets: Record<string, string> }).sets)) for (const type of Object.keys(claimsOf(set).events)) seen.add(type);
      return seen.has(SESSION_REVOKED);
    }, 'the session-revoked SET on the default stream');
    expect([...seen]).toEqual([SESSION_REVOKED]);
  });

  it('loses nothing while the receiver is down for 30 s: every SET arrives once it is back, duplicates under the same jti', async () => {
    const receiverPort = await freePort();
    const record = join(work, 'outage.jsonl');
    const { aud } = await pushStream(`https://localhost:${receiverPort}/events`);
    const receiver = await startPushReceiver(receiverPort, record, aud);
    const revoked = [await revokeFamily()];
    await until(() => sessionsIn(record).size === 1, 'the first SET');
    receiver.kill('SIGKILL');
    const downAt = Date.now();
    while (Date.now() - downAt < 30_000) {
      revoked.push(await revokeFamily());
      await new Promise((resolveWait) => setTimeout(resolveWait, 3_000));
    }
    await startPushReceiver(receiverPort, record, aud);
    revoked.push(await revokeFamily());
    await until(() => sessionsIn(record).size === revoked.length, `all ${revoked.length} SETs`, { timeoutMs: 60_000 });
    expect(sessionsIn(record)).toEqual(new Set(revoked));
    expectVerifiedAndDeduplicable(record);
  }, 120_000);

  it('keeps a SET a receiver refuses as invalid_request within 15 minutes of the signing key\'s publication (a stale key cache), and delivers it once the receiver takes it', async () => {
    // This Tessera published its signing key when it started, moments ago: a receiver's
    // invalid_request now is taken for a key cache that has not seen the key, not a malformed SET.
    let refusing = true;
    const arrived: string[] = [];
    const server = createHttpsServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (refusing) return void response.writeHead(400, { 'content-type': 'application/json' }).end('{"err":"invalid_request","description":"unknown kid"}');
        arrived.push(JSON.parse(Buffer.from(Buffer.concat(chunks).toString().split('.')[1]!, 'base64url').toString()).sub_id.session.id as string);
        response.writeHead(202).end();
      });
    });
    const receiverPort = await freePort();
    await new Promise<void>((resolveListening) => server.listen(receiverPort, '127.0.0.1', resolveListening));
    try {
      const { streamId } = await pushStream(`https://localhost:${receiverPort}/events`);
      const family = await revokeFamily();
      const failedOf = async () => Number(/tessera_ssf_failed_total\{stream_id="([^"]+)"\} (\d+)/.exec((await tessera.adminRequest('/metrics')).text.split('\n').find((line) => line.includes(streamId) && line.startsWith('tessera_ssf_failed_total')) ?? '')?.[2] ?? 0);
      await until(async () => (await failedOf()) >= 2, 'the refused push to be tried again');
      const status = (await streamsRequest('GET', `/ssf/status?stream_id=${streamId}`)).json() as Record<string, unknown>;
      expect(status).toEqual({ stream_id: streamId, status: 'enabled' });
      refusing = false;
      await until(() => arrived.includes(family), 'the kept SET to arrive');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('keeps delivering a stream while another stream\'s receiver accepts connections and never answers', async () => {
    const blackHolePort = await freePort();
    const sockets = new Set<Socket>();
    // Accepts every connection and never says a word: no TLS handshake, no answer.
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolveListening) => server.listen(blackHolePort, '127.0.0.1', resolveListening));
    blackHoles.push({ server, sockets });
    const hung = await pushStream(`https://localhost:${blackHolePort}/events`);
    const receiverPort = await freePort();
    const record = join(work, 'isolation.jsonl');
    const { aud } = await pushStream(`https://localhost:${receiverPort}/events`);
    await startPushReceiver(receiverPort, record, aud);
    const started = Date.now();
    const revoked: string[] = [];
    for (let index = 0; index < 5; index += 1) revoked.push(await revokeFamily());
    await until(() => [...revoked].every((family) => sessionsIn(record).has(family)), 'the healthy stream\'s SETs', { timeoutMs: 10_000 });
    // The black hole holds its SETs: it is hanging all the while (a push waits TESSERA_SSF_PUSH_TIMEOUT=2 s).
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(sockets.size).toBeGreaterThan(0);
    const metrics = (await tessera.adminRequest('/metrics')).text;
    expect(Number(new RegExp(`^tessera_ssf_pending_sets\\{stream_id="${hung.streamId}"\\} (\\d+)$`, 'm').exec(metrics)?.[1])).toBeGreaterThanOrEqual(5);
    expectVerifiedAndDeduplicable(record);
  }, 60_000);

  it('loses nothing when the transmitter is killed (-9) mid-delivery and restarted: every SET arrives, duplicates under the same jti', async () => {
    const receiverPort = await freePort();
    const record = join(work, 'crash.jsonl');
    const { aud } = await pushStream(`https://localhost:${receiverPort}/events`);
    // A slow receiver (40 ms a SET), so the kill finds SETs read, pushed and unacknowledged.
    await startPushReceiver(receiverPort, record, aud, 40);
    const revoked: string[] = [];
    for (let index = 0; index < 40; index += 1) revoked.push(await revokeFamily());
    await until(() => sessionsIn(record).size >= 5, 'some SETs before the kill');
    expect(sessionsIn(record).size).toBeLessThan(revoked.length);
    tessera.signal('SIGKILL');
    await tessera.exited;
    tessera = await startTessera(env, { dataDir, keepData: true });
    await until(() => sessionsIn(record).size === revoked.length, `all ${revoked.length} SETs after the restart`, { timeoutMs: 60_000 });
    expect(sessionsIn(record)).toEqual(new Set(revoked));
    expectVerifiedAndDeduplicable(record);
  }, 120_000);
});

describe('TESSERA_SSF_ALLOW_HTTP_PUSH', () => {
  it('=true lets a stream push to an http endpoint, and is named in the development-only warning at start', async () => {
    const tessera = await startTessera({ TESSERA_SSF_ALLOW_HTTP_PUSH: 'true' });
    try {
      const warning = tessera
        .logs()
        .split('\n')
        .find((line) => line.includes('development-only defaults in use'));
      expect(warning).toContain('TESSERA_SSF_ALLOW_HTTP_PUSH=true');
      const token = (JSON.parse((await tessera.tessera(['ssf-receivers', 'create', '--name', 'dev', '--json'])).stdout) as { token: string }).token;
      const create = () =>
        tessera.request('/ssf/streams', {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: 'http://receiver.example.test/events' } }),
        });
      await until(async () => (await create()).status !== 401, 'the receiver token to be accepted');
      expect((await create()).status).toBe(201);
    } finally {
      await tessera.stop();
    }
  });

  it('unset, the warning does not name it and an http endpoint is refused (400)', async () => {
    const tessera = await startTessera();
    try {
      expect(tessera.logs()).not.toContain('TESSERA_SSF_ALLOW_HTTP_PUSH');
      const token = (JSON.parse((await tessera.tessera(['ssf-receivers', 'create', '--name', 'prod', '--json'])).stdout) as { token: string }).token;
      const create = () =>
        tessera.request('/ssf/streams', {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: 'http://receiver.example.test/events' } }),
        });
      await until(async () => (await create()).status !== 401, 'the receiver token to be accepted');
      expect((await create()).status).toBe(400);
    } finally {
      await tessera.stop();
    }
  });
});

describe('in the split topology', () => {
  it('tessera issuer serves the transmitter: its metadata, stream management for a receiver token, and the receivers\' admin routes', async () => {
    const issuer = await startTessera({}, { command: 'issuer' });
    try {
      const metadata = await issuer.request('/.well-known/ssf-configuration');
      expect(metadata.status).toBe(200);
      expect(metadata.json()).toMatchObject({ issuer: expect.stringMatching(/^https:\/\//), default_subjects: 'NONE' });
      const token = (JSON.parse((await issuer.tessera(['ssf-receivers', 'create', '--name', 'split', '--json'])).stdout) as { token: string }).token;
      await until(async () => (await issuer.request('/ssf/streams', { headers: { authorization: `Bearer ${token}` } })).status === 200, 'the receiver token to be accepted');
      expect((await issuer.adminRequest('/admin/v1/ssf/receivers')).status).toBe(401);
    } finally {
      await issuer.stop();
    }
  });
});

describe('tessera ssf-receivers', () => {
  it('create --json prints exactly receiver_id and token; list never shows the token; revoke makes the server refuse it; an unknown id exits 3, a blank name 2', async () => {
    const tessera = await startTessera();
    try {
      const created = JSON.parse((await tessera.tessera(['ssf-receivers', 'create', '--name', 'Partner API', '--json'])).stdout) as Record<string, string>;
      expect(Object.keys(created).sort()).toEqual(['receiver_id', 'token']);
      const streams = () => tessera.request('/ssf/streams', { headers: { authorization: `Bearer ${created.token}` } });
      await until(async () => (await streams()).status === 200, 'the receiver token to be accepted');
      const listed = await tessera.tessera(['ssf-receivers', 'list', '--json']);
      expect(JSON.parse(listed.stdout)).toEqual([{ receiver_id: created.receiver_id, name: 'Partner API', accounts: null, created: expect.stringMatching(/^\d{4}-/), revoked: null }]);
      expect(listed.stdout).not.toContain(created.token!);
      await tessera.tessera(['ssf-receivers', 'revoke', '--id', created.receiver_id!]);
      await until(async () => (await streams()).status === 401, 'the revoked token to be refused');
      await expect(tessera.tessera(['ssf-receivers', 'revoke', '--id', 'no-such-receiver'])).rejects.toMatchObject({ code: 3 });
      await expect(tessera.tessera(['ssf-receivers', 'create', '--name', ' '])).rejects.toMatchObject({ code: 2 });
    } finally {
      await tessera.stop();
    }
  });
});

describe('a receiver scoped to accounts', () => {
  it('created with --account, follows those accounts and their families only: any other subject is 403', async () => {
    const tessera = await startTessera();
    try {
      const mine = await tessera.createAccount();
      const other = await tessera.createAccount();
      const created = JSON.parse((await tessera.tessera(['ssf-receivers', 'create', '--name', 'Scoped', '--account', mine.account_id, '--json'])).stdout) as { receiver_id: string; token: string; accounts: string[] };
      expect(created.accounts).toEqual([mine.account_id]);
      const listed = JSON.parse((await tessera.tessera(['ssf-receivers', 'list', '--json'])).stdout) as { receiver_id: string; accounts: string[] | null }[];
      expect(listed.find((row) => row.receiver_id === created.receiver_id)?.accounts).toEqual([mine.account_id]);
      const call = (path: string, body: unknown) =>
        tessera.request(path, { method: 'POST', headers: { authorization: `Bearer ${created.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      let stream = await call('/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } });
      await until(async () => stream.status !== 401 || (stream = await call('/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } })).status !== 401, 'the receiver token to be accepted');
      const streamId = (stream.json() as { stream_id: string }).stream_id;
      const issuer = (await tessera.request('/.well-known/ssf-configuration')).json() as { issuer: string };
      const familyOf = async (account: Credentials) => {
        const pair = (await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).json() as { refresh_token: string };
        return pair.refresh_token.slice('tsr_'.length).split('.')[0]!;
      };
      const add = (subject: unknown) => call('/ssf/subjects/add', { stream_id: streamId, subject });
      expect((await add({ format: 'iss_sub', iss: issuer.issuer, sub: mine.account_id })).status).toBe(200);
      expect((await add({ format: 'opaque', id: await familyOf(mine) })).status).toBe(200);
      for (const outside of [{ format: 'iss_sub', iss: issuer.issuer, sub: other.account_id }, { format: 'opaque', id: await familyOf(other) }, { format: 'opaque', id: 'no-such-family' }]) {
        const refused = await add(outside);
        expect(refused.status).toBe(403);
        expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      }
    } finally {
      await tessera.stop();
    }
  });
});

describe('the caps on what one receiver can make', () => {
  it('TESSERA_SSF_MAX_STREAMS_PER_RECEIVER refuses one stream too many (409), and TESSERA_SSF_MIN_VERIFICATION_INTERVAL a verification too soon (429, Retry-After)', async () => {
    const tessera = await startTessera({ TESSERA_SSF_MAX_STREAMS_PER_RECEIVER: '2', TESSERA_SSF_MIN_VERIFICATION_INTERVAL: '60' });
    try {
      const token = (JSON.parse((await tessera.tessera(['ssf-receivers', 'create', '--name', 'capped', '--json'])).stdout) as { token: string }).token;
      const call = (method: string, path: string, body: unknown) =>
        tessera.request(path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const create = () => call('POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } });
      let first = await create();
      await until(async () => first.status !== 401 || (first = await create()).status !== 401, 'the receiver token to be accepted');
      expect(first.status).toBe(201);
      const { stream_id: streamId, min_verification_interval: interval } = first.json() as { stream_id: string; min_verification_interval: number };
      expect(interval).toBe(60);
      expect((await create()).status).toBe(201);
      const third = await create();
      expect(third.status).toBe(409);
      expect(third.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect((third.json() as { detail: string }).detail).toContain('TESSERA_SSF_MAX_STREAMS_PER_RECEIVER');
      // The answer to a GET without stream_id is an array: HttpAnswer types json() as an object.
      expect(((await tessera.request('/ssf/streams', { headers: { authorization: `Bearer ${token}` } })).json() as unknown as unknown[]).length).toBe(2);

      expect((await call('POST', '/ssf/verify', { stream_id: streamId, state: 'one' })).status).toBe(204);
      const again = await call('POST', '/ssf/verify', { stream_id: streamId, state: 'two' });
      expect(again.status).toBe(429);
      expect(Number(again.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(again.headers['retry-after'])).toBeLessThanOrEqual(60);
    } finally {
      await tessera.stop();
    }
  });
});
