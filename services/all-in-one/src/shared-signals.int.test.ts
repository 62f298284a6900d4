import { createPublicKey, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { ssfStreams, streams, type AccountEvent } from '@tessera/events';
import { createAdminTokenService } from '@tessera/admin-tokens';
import { epochSeconds, systemClock } from '@tessera/timing';
import { startInProcess, type InProcessAllInOne } from './testing/in-process.js';

/**
 * The Shared Signals transmitter through inject(), in the all-in-one as `tessera start` wires it:
 * receiver tokens from the admin API, stream management on the public listener, and a polled
 * stream delivering a CAEP SET for a revocation made through revoke-oauth-token.
 */
const publicUrl = 'https://tessera.example.test';
let tessera: InProcessAllInOne;
let app: FastifyInstance;
let adminApp: FastifyInstance;
let adminToken = '';
let readerOnly = '';

const at = () => epochSeconds(systemClock);

beforeAll(async () => {
  tessera = await startInProcess({ env: { TESSERA_PUBLIC_URL: publicUrl, TESSERA_SSF_POLL_WAIT: '2', TESSERA_SSF_ACK_DEADLINE: '1', TESSERA_SSF_EMPTY_POLL_INTERVAL: '5' } });
  ({ app, admin: adminApp } = tessera);
  const events: AccountEvent[] = [
    { type: 'AccountRegistered', v: 1, accountId: 'acct-a', name: 'Shop A', permissions: ['transaction:charge'], at: at() },
    { type: 'ApiCredentialIssued', v: 1, accountId: 'acct-a', credentialId: 'cred-a', apiLoginId: 'tsl_a', transactionKeyHash: tessera.hasher.hash('tsk_a'), at: at() },
  ];
  await tessera.store.append(streams.account('acct-a'), events.map((event) => ({ event })), { expectedRevision: 'no_stream' });
  const adminTokens = createAdminTokenService({ store: tessera.store, hasher: tessera.hasher, now: at, actor: 'cli' });
  adminToken = (await adminTokens.create({ name: 'signals', scopes: ['ssf:receivers'] })).adminToken;
  readerOnly = (await adminTokens.create({ name: 'reader', scopes: ['audit:read'] })).adminToken;
  await tessera.caughtUp();
});
afterAll(async () => {
  expect(tessera?.fatal()).toBeUndefined();
  await tessera?.close();
});

const adminPost = (url: string, payload?: object, token = adminToken) =>
  adminApp.inject({ method: 'POST', url, ...(payload ? { payload } : {}), headers: { authorization: `Bearer ${token}` } });
async function newReceiver(name: string): Promise<{ receiver_id: string; token: string }> {
  const answer = await adminPost('/admin/v1/ssf/receivers', { name });
  expect(answer.statusCode).toBe(201);
  const created = answer.json<{ receiver_id: string; token: string }>();
  await tessera.caughtUp();
  return created;
}
const call = (token: string, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, ...(payload ? { payload } : {}), headers: { authorization: `Bearer ${token}` } });
/**
 * The position of the last event appended by anything but the delivery lease, which records its
 * renewals and checkpoints in `ssfdelivery` on its own schedule: what a refused request must leave as it was.
 */
const lastChange = async (): Promise<bigint | undefined> => (await tessera.store.readAll()).filter(({ stream }) => stream !== ssfStreams.delivery()).at(-1)?.position;
const logText = async () => JSON.stringify((await tessera.store.readAll()).map(({ event, metadata }) => ({ event, metadata })));
function expectProblem(answer: LightMyRequestResponse, status: number): void {
  expect(answer.statusCode).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
}

describe('the transmitter metadata', () => {
  it('names TESSERA_PUBLIC_URL as the issuer, and every endpoint as an absolute URL under it', async () => {
    const answer = await app.inject({ method: 'GET', url: '/.well-known/ssf-configuration' });
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({
      spec_version: '1_0',
      issuer: publicUrl,
      jwks_uri: `${publicUrl}/.well-known/jwks.json`,
      delivery_methods_supported: ['urn:ietf:rfc:8935', 'urn:ietf:rfc:8936'],
      configuration_endpoint: `${publicUrl}/ssf/streams`,
      status_endpoint: `${publicUrl}/ssf/status`,
      add_subject_endpoint: `${publicUrl}/ssf/subjects/add`,
      remove_subject_endpoint: `${publicUrl}/ssf/subjects/remove`,
      verification_endpoint: `${publicUrl}/ssf/verify`,
      authorization_schemes: [{ spec_urn: 'urn:ietf:rfc:6750' }],
      default_subjects: 'NONE',
    });
  });
});

describe('receiver tokens through the admin API', () => {
  it('creates a receiver (scope ssf:receivers), lists it without its token, and revokes it: its token is refused from then on', async () => {
    expectProblem(await adminPost('/admin/v1/ssf/receivers', { name: 'x' }, readerOnly), 403);
    const created = await newReceiver('Partner API');
    expect(created.token).toMatch(/^tss_[A-Za-z0-9_-]{43}$/);
    expect(await logText()).not.toContain(created.token);
    expect((await call(created.token, 'GET', '/ssf/streams')).statusCode).toBe(200);
    const listed = await adminApp.inject({ method: 'GET', url: '/admin/v1/ssf/receivers', headers: { authorization: `Bearer ${adminToken}` } });
    expect(listed.json<{ receivers: { receiver_id: string; name: string; revoked: string | null }[] }>().receivers).toContainEqual(expect.objectContaining({ receiver_id: created.receiver_id, name: 'Partner API', revoked: null }));
    expect(listed.body).not.toContain(created.token);
    const revoked = await adminPost(`/admin/v1/ssf/receivers/${created.receiver_id}/revoke`);
    expect(revoked.json()).toMatchObject({ receiver_id: created.receiver_id, already_revoked: false });
    await tessera.caughtUp();
    expectProblem(await call(created.token, 'GET', '/ssf/streams'), 401);
    expectProblem(await adminPost('/admin/v1/ssf/receivers/no-such-receiver/revoke'), 404);
  });

  it('scopes a receiver to accounts with `accounts`: it adds their subjects, and any other is 403 with nothing appended', async () => {
    const answer = await adminPost('/admin/v1/ssf/receivers', { name: 'Scoped partner', accounts: ['acct-a'] });
    expect(answer.statusCode).toBe(201);
    const created = answer.json<{ receiver_id: string; token: string; accounts: string[] }>();
    expect(created.accounts).toEqual(['acct-a']);
    await tessera.caughtUp();
    const listed = await adminApp.inject({ method: 'GET', url: '/admin/v1/ssf/receivers', headers: { authorization: `Bearer ${adminToken}` } });
    expect(listed.json<{ receivers: { receiver_id: string; accounts?: string[] }[] }>().receivers).toContainEqual(expect.objectContaining({ receiver_id: created.receiver_id, accounts: ['acct-a'] }));
    const id = (await call(created.token, 'POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } })).json<{ stream_id: string }>().stream_id;
    expect((await call(created.token, 'POST', '/ssf/subjects/add', { stream_id: id, subject: { format: 'iss_sub', iss: publicUrl, sub: 'acct-a' } })).statusCode).toBe(200);
    const head = await lastChange();
    expectProblem(await call(created.token, 'POST', '/ssf/subjects/add', { stream_id: id, subject: { format: 'iss_sub', iss: publicUrl, sub: 'acct-b' } }), 403);
    expectProblem(await call(created.token, 'POST', '/ssf/subjects/add', { stream_id: id, subject: { format: 'opaque', id: 'fam-of-nobody' } }), 403);
    expect(await lastChange()).toBe(head);
  });

  it('refuses stream management without a token, or with an unknown one, with a Bearer challenge', async () => {
    const none = await app.inject({ method: 'GET', url: '/ssf/streams' });
    expectProblem(none, 401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    const unknown = await call('tss_unknown', 'GET', '/ssf/streams');
    expectProblem(unknown, 401);
    expect(unknown.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  });
});

describe('stream management', () => {
  it('creates, reads, updates, replaces and deletes a stream; the authorization header is never returned nor in the log in plain form', async () => {
    const { token } = await newReceiver('lifecycle');
    const header = 'Bearer receiver-secret-for-push-0123456789';
    const created = await call(token, 'POST', '/ssf/streams', {
      delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: 'https://receiver.example.test/events', authorization_header: header },
      events_requested: ['https://schemas.openid.net/secevent/caep/event-type/session-revoked', 'urn:unknown'],
      description: 'first',
    });
    expect(created.statusCode).toBe(201);
    const stream = created.json<{ stream_id: string }>();
    expect(stream).toMatchObject({
      iss: publicUrl,
      aud: 'https://receiver.example.test/events',
      events_requested: ['https://schemas.openid.net/secevent/caep/event-type/session-revoked', 'urn:unknown'],
      events_delivered: ['https://schemas.openid.net/secevent/caep/event-type/session-revoked'],
      delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: 'https://receiver.example.test/events' },
      description: 'first',
    });
    expect(created.body).not.toContain('receiver-secret');
    const id = stream.stream_id;
    expect((await call(token, 'GET', `/ssf/streams?stream_id=${id}`)).json()).toEqual(stream);
    expect((await call(token, 'GET', '/ssf/streams')).json()).toEqual([stream]);

    const patched = await call(token, 'PATCH', '/ssf/streams', { stream_id: id, description: 'second' });
    expect(patched.json()).toMatchObject({ description: 'second', delivery: { endpoint_url: 'https://receiver.example.test/events' } });
    const replaced = await call(token, 'PUT', '/ssf/streams', { stream_id: id, delivery: { method: 'urn:ietf:rfc:8936' } });
    expect(replaced.json()).toMatchObject({ delivery: { method: 'urn:ietf:rfc:8936', endpoint_url: `${publicUrl}/ssf/poll?stream_id=${id}` }, aud: expect.stringMatching(/^urn:tessera:ssf:receiver:/) });
    expect(replaced.json()).not.toHaveProperty('description');

    const log = await logText();
    expect(log).not.toContain('receiver-secret');
    expect(log).toMatch(/"sealedAuthorization":"v1\./);

    expect((await call(token, 'DELETE', `/ssf/streams?stream_id=${id}`)).statusCode).toBe(204);
    expectProblem(await call(token, 'GET', `/ssf/streams?stream_id=${id}`), 404);
    expect((await call(token, 'GET', '/ssf/streams')).json()).toEqual([]);
  });

  it("answers another receiver's stream 404, for every operation, and changes nothing", async () => {
    const owner = await newReceiver('owner');
    const other = await newReceiver('other');
    const id = (await call(owner.token, 'POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } })).json<{ stream_id: string }>().stream_id;
    const head = await lastChange();
    const subject = { format: 'opaque', id: 'fam' };
    for (const answer of [
      await call(other.token, 'GET', `/ssf/streams?stream_id=${id}`),
      await call(other.token, 'PATCH', '/ssf/streams', { stream_id: id, description: 'mine now' }),
      await call(other.token, 'PUT', '/ssf/streams', { stream_id: id, delivery: { method: 'urn:ietf:rfc:8936' } }),
      await call(other.token, 'DELETE', `/ssf/streams?stream_id=${id}`),
      await call(other.token, 'GET', `/ssf/status?stream_id=${id}`),
      await call(other.token, 'POST', '/ssf/status', { stream_id: id, status: 'disabled' }),
      await call(other.token, 'POST', '/ssf/subjects/add', { stream_id: id, subject }),
      await call(other.token, 'POST', '/ssf/subjects/remove', { stream_id: id, subject }),
      await call(other.token, 'POST', '/ssf/verify', { stream_id: id }),
      await call(other.token, 'POST', `/ssf/poll?stream_id=${id}`, { returnImmediately: true }),
    ]) {
      expectProblem(answer, 404);
    }
    expect((await call(other.token, 'GET', '/ssf/streams')).json()).toEqual([]);
    expect(await lastChange()).toBe(head);
  });

  it.each([
    ['an http push endpoint', { delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: 'http://receiver.example.test/events' } }, 'delivery.endpoint_url'],
    ['a push endpoint on loopback (the egress policy)', { delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: 'https://127.0.0.1:8443/events' } }, 'delivery.endpoint_url'],
    ['a push endpoint named localhost (resolved, then refused)', { delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: 'https://localhost/events' } }, 'delivery.endpoint_url'],
    ['a push endpoint at the cloud metadata address', { delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: 'https://169.254.169.254/latest/meta-data/' } }, 'delivery.endpoint_url'],
    ['a push endpoint in a private range', { delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: 'https://[fd00::1]/events' } }, 'delivery.endpoint_url'],
    ['a push endpoint with credentials in it', { delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: 'https://user:pw@receiver.example.test/' } }, 'delivery.endpoint_url'],
    ['an authorization header over two lines', { delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: 'https://receiver.example.test/', authorization_header: 'Bearer a\r\nX-Evil: 1' } }, 'delivery.authorization_header'],
    ['an unknown delivery method', { delivery: { method: 'urn:example:carrier-pigeon' } }, 'delivery.method'],
    ['an unknown field', { delivery: { method: 'urn:ietf:rfc:8936' }, colour: 'blue' }, 'colour'],
  ])('refuses %s with a 400 problem naming the field, appending nothing', async (_what, body, field) => {
    const { token } = await newReceiver('bad input');
    const head = await lastChange();
    const answer = await call(token, 'POST', '/ssf/streams', body);
    expectProblem(answer, 400);
    expect(JSON.stringify(answer.json<{ errors?: unknown }>().errors)).toContain(field);
    expect(await lastChange()).toBe(head);
  });

  it('sets and reads the status; adds and removes subjects, refusing an iss_sub of another issuer', async () => {
    const { token } = await newReceiver('status');
    const id = (await call(token, 'POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } })).json<{ stream_id: string }>().stream_id;
    expect((await call(token, 'GET', `/ssf/status?stream_id=${id}`)).json()).toEqual({ stream_id: id, status: 'enabled' });
    expect((await call(token, 'POST', '/ssf/status', { stream_id: id, status: 'paused', reason: 'maintenance' })).json()).toEqual({ stream_id: id, status: 'paused', reason: 'maintenance' });
    expect((await call(token, 'GET', `/ssf/status?stream_id=${id}`)).json()).toEqual({ stream_id: id, status: 'paused', reason: 'maintenance' });
    expectProblem(await call(token, 'POST', '/ssf/status', { stream_id: id, status: 'asleep' }), 400);
    const account = { format: 'iss_sub', iss: publicUrl, sub: 'acct-a' };
    expect((await call(token, 'POST', '/ssf/subjects/add', { stream_id: id, subject: account })).statusCode).toBe(200);
    const head = await lastChange();
    expectProblem(await call(token, 'POST', '/ssf/subjects/add', { stream_id: id, subject: { ...account, iss: 'https://elsewhere.example' } }), 400);
    expectProblem(await call(token, 'POST', '/ssf/subjects/add', { stream_id: id, subject: { format: 'email', email: 'a@example.com' } }), 400);
    expect(await lastChange()).toBe(head);
    expect((await call(token, 'POST', '/ssf/subjects/remove', { stream_id: id, subject: account })).statusCode).toBe(204);
    const kinds = (await tessera.store.readStream(`ssfstream-${id}`)).map(({ event }) => event.type);
    expect(kinds).toEqual(['SsfStreamCreated', 'SsfStreamStatusChanged', 'SsfSubjectAdded', 'SsfSubjectRemoved']);
  });

  it('answers commands that race on one stream 200 or 409 with Retry-After, never 500, and a 409 changed nothing', async () => {
    const { token } = await newReceiver('racing');
    const id = (await call(token, 'POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } })).json<{ stream_id: string }>().stream_id;
    const families = Array.from({ length: 60 }, (_, index) => `fam-race-${index}`);
    const answers = await Promise.all(families.map((family) => call(token, 'POST', '/ssf/subjects/add', { stream_id: id, subject: { format: 'opaque', id: family } })));
    expect(new Set(answers.map((answer) => answer.statusCode))).toEqual(new Set([200, 409]));
    for (const refused of answers.filter((answer) => answer.statusCode === 409)) {
      expectProblem(refused, 409);
      expect(refused.headers['retry-after']).toBe('1');
    }
    const added = new Set((await tessera.store.readStream(`ssfstream-${id}`)).flatMap(({ event }) => (event.type === 'SsfSubjectAdded' && event.subject.kind === 'family' ? [event.subject.familyId] : [])));
    expect(added).toEqual(new Set(families.filter((_, index) => answers[index]!.statusCode === 200)));
  });
});

describe("a stream's history of subjects coming and going", () => {
  it('is read back from its newest snapshot by every command, and a paused stream resumes delivery with the subjects it follows', async () => {
    const { token } = await newReceiver('churner');
    const id = (await call(token, 'POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } })).json<{ stream_id: string }>().stream_id;
    const session = (n: number) => ({ stream_id: id, subject: { format: 'opaque', id: `fam-churn-${n % 5}` } });
    for (let n = 0; n < 600; n += 1) expect((await call(token, 'POST', n % 10 < 5 ? '/ssf/subjects/add' : '/ssf/subjects/remove', session(n))).statusCode).toBeLessThan(300);
    expect((await call(token, 'POST', '/ssf/status', { stream_id: id, status: 'paused' })).statusCode).toBe(200);
    const history = (await tessera.store.readStream(`ssfstream-${id}`)).map(({ event }) => event.type);
    expect(history.length).toBeGreaterThan(600);
    expect(history.filter((type) => type === 'SsfStreamSnapshotted').length).toBeGreaterThanOrEqual(5);

    // What a command on the stream reads of it, seen at the process's own store.
    const read: number[] = [];
    const readStream = tessera.store.readStream.bind(tessera.store);
    tessera.store.readStream = async (stream, options) => {
      const events = await readStream(stream, options);
      if (stream === `ssfstream-${id}`) read.push(events.length);
      return events;
    };
    try {
      expect((await call(token, 'POST', '/ssf/subjects/add', { stream_id: id, subject: { format: 'iss_sub', iss: publicUrl, sub: 'acct-a' } })).statusCode).toBe(200);
      expect((await call(token, 'POST', '/ssf/status', { stream_id: id, status: 'enabled' })).statusCode).toBe(200);
      const pair = (await app.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token', payload: { api_login_id: 'tsl_a', transaction_key: 'tsk_a' } })).json<{ refresh_token: string }>();
      expect((await app.inject({ method: 'POST', url: '/v5/Authorization/revoke-oauth-token', payload: { refresh_token: pair.refresh_token } })).statusCode).toBe(200);
      const familyId = pair.refresh_token.slice(4).split('.')[0]!;
      const polled = (await call(token, 'POST', `/ssf/poll?stream_id=${id}`, { maxEvents: 10 })).json<{ sets: Record<string, string> }>();
      const sessions = Object.values(polled.sets).map((set) => (JSON.parse(Buffer.from(set.split('.')[1]!, 'base64url').toString()) as { sub_id: { session?: { id: string } } }).sub_id.session?.id);
      expect(sessions).toContain(familyId);
    } finally {
      tessera.store.readStream = readStream;
    }
    expect(read.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...read)).toBeLessThanOrEqual(101);
  });
});

describe('a polled stream', () => {
  it("delivers a session-revoked SET for revoke-oauth-token, signed with a JWKS key, and again until acknowledged; then the verification event with the receiver's state", async () => {
    const { token, receiver_id } = await newReceiver('poller');
    const id = (await call(token, 'POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } })).json<{ stream_id: string }>().stream_id;
    await call(token, 'POST', '/ssf/subjects/add', { stream_id: id, subject: { format: 'iss_sub', iss: publicUrl, sub: 'acct-a' } });
    const pair = (await app.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token', payload: { api_login_id: 'tsl_a', transaction_key: 'tsk_a' } })).json<{ refresh_token: string }>();
    expect((await app.inject({ method: 'POST', url: '/v5/Authorization/revoke-oauth-token', payload: { refresh_token: pair.refresh_token } })).statusCode).toBe(200);
    const familyId = pair.refresh_token.slice(4).split('.')[0]!;

    const pollSent = performance.now();
    const polled = await call(token, 'POST', `/ssf/poll?stream_id=${id}`, { maxEvents: 10 });
    expect(polled.statusCode).toBe(200);
    const { sets, moreAvailable } = polled.json<{ sets: Record<string, string>; moreAvailable: boolean }>();
    expect(moreAvailable).toBe(false);
    const [[jti, set]] = Object.entries(sets) as [[string, string]];
    const [headerPart, claimsPart, signature] = set.split('.') as [string, string, string];
    const header = JSON.parse(Buffer.from(headerPart, 'base64url').toString()) as { typ: string; kid: string; alg: string };
    expect(header).toMatchObject({ typ: 'secevent+jwt', alg: 'ES256' });
    const jwks = (await app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json<{ keys: { kid: string }[] }>();
    const jwk = jwks.keys.find((key) => key.kid === header.kid);
    expect(jwk).toBeDefined();
    expect(verify('sha256', Buffer.from(`${headerPart}.${claimsPart}`), { key: createPublicKey({ key: jwk!, format: 'jwk' }), dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'))).toBe(true);
    const claims = JSON.parse(Buffer.from(claimsPart, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({
      iss: publicUrl,
      aud: `urn:tessera:ssf:receiver:${receiver_id}`,
      jti,
      sub_id: { format: 'complex', user: { format: 'iss_sub', iss: publicUrl, sub: 'acct-a' }, session: { format: 'opaque', id: familyId } },
      events: { 'https://schemas.openid.net/secevent/caep/event-type/session-revoked': { initiating_entity: 'user', event_timestamp: expect.any(Number) } },
    });
    expect(set).not.toContain(pair.refresh_token);

    // Not acknowledged: held back from the next polls until TESSERA_SSF_ACK_DEADLINE (1 s) has
    // passed, then answered again with the same jti; a long poll waits for that.
    expect((await call(token, 'POST', `/ssf/poll?stream_id=${id}`, { returnImmediately: true })).json()).toEqual({ sets: {}, moreAvailable: false });
    const again = (await call(token, 'POST', `/ssf/poll?stream_id=${id}`, { returnImmediately: false })).json<{ sets: Record<string, string> }>();
    expect(Object.keys(again.sets)).toEqual([jti]);
    expect(performance.now() - pollSent).toBeGreaterThanOrEqual(990);
    expect((await call(token, 'POST', `/ssf/verify`, { stream_id: id, state: 'state-123' })).statusCode).toBe(204);
    // Apart from the stream's own stream, which every command on it reads whole.
    expect((await tessera.store.readStream(`ssfverifications-${id}`)).map(({ event }) => event.type)).toEqual(['SsfVerificationRequested']);
    expect((await tessera.store.readStream(`ssfstream-${id}`)).map(({ event }) => event.type)).not.toContain('SsfVerificationRequested');
    const afterAck = (await call(token, 'POST', `/ssf/poll?stream_id=${id}`, { ack: [jti] })).json<{ sets: Record<string, string> }>();
    const [verification] = Object.values(afterAck.sets);
    expect(Object.keys(afterAck.sets)).not.toContain(jti);
    const verificationClaims = JSON.parse(Buffer.from(verification!.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(verificationClaims).toMatchObject({ sub_id: { format: 'opaque', id }, events: { 'https://schemas.openid.net/secevent/ssf/event-type/verification': { state: 'state-123' } } });
  });

  it("is shown on the admin API (ssf:receivers): status, pending SETs until acknowledged, then its last delivery", async () => {
    const { token, receiver_id } = await newReceiver('watched');
    const id = (await call(token, 'POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } })).json<{ stream_id: string }>().stream_id;
    await call(token, 'POST', '/ssf/subjects/add', { stream_id: id, subject: { format: 'iss_sub', iss: publicUrl, sub: 'acct-a' } });
    const streamsOf = async () => {
      const answer = await adminApp.inject({ method: 'GET', url: `/admin/v1/ssf/receivers/${receiver_id}/streams`, headers: { authorization: `Bearer ${adminToken}` } });
      expect(answer.statusCode).toBe(200);
      return answer.json<{ streams: { stream_id: string; status: string; delivery_method: string; delivered_here: boolean; pending_sets: number; last_delivery: string | null; dropped_sets: number }[] }>().streams;
    };
    const pair = (await app.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token', payload: { api_login_id: 'tsl_a', transaction_key: 'tsk_a' } })).json<{ refresh_token: string }>();
    expect((await app.inject({ method: 'POST', url: '/v5/Authorization/revoke-oauth-token', payload: { refresh_token: pair.refresh_token } })).statusCode).toBe(200);
    const [jti] = Object.keys((await call(token, 'POST', `/ssf/poll?stream_id=${id}`, { maxEvents: 10 })).json<{ sets: Record<string, string> }>().sets);
    expect(jti).toBeDefined();
    expect(await streamsOf()).toEqual([expect.objectContaining({ stream_id: id, status: 'enabled', delivery_method: 'poll', delivered_here: true, pending_sets: 1, last_delivery: null, dropped_sets: 0 })]);
    await call(token, 'POST', `/ssf/poll?stream_id=${id}`, { ack: [jti], returnImmediately: true });
    const [after] = await streamsOf();
    expect(after).toMatchObject({ pending_sets: 0 });
    expect(Date.parse(after!.last_delivery!)).toBeGreaterThan(Date.now() - 60_000);
    expect((await adminApp.inject({ method: 'GET', url: `/admin/v1/ssf/receivers/${receiver_id}/streams`, headers: { authorization: `Bearer ${readerOnly}` } })).statusCode).toBe(403);
  });

  it("takes a poll body naming the polled stream's stream_id, and answers one naming another stream 404", async () => {
    const { token } = await newReceiver('naming poller');
    const id = (await call(token, 'POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } })).json<{ stream_id: string }>().stream_id;
    expect((await call(token, 'POST', `/ssf/poll?stream_id=${id}`, { stream_id: id, returnImmediately: true })).statusCode).toBe(200);
    expectProblem(await call(token, 'POST', `/ssf/poll?stream_id=${id}`, { stream_id: 'another-stream', returnImmediately: true }), 404);
  });

  it('takes the largest poll body its schema allows (under the 16 KiB body limit), and refuses one past its bounds with 400, not 413', async () => {
    const { token } = await newReceiver('big poller');
    const id = (await call(token, 'POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } })).json<{ stream_id: string }>().stream_id;
    const jti = (n: number) => `${n}`.padStart(64, 'j');
    const setErrs = Object.fromEntries(Array.from({ length: 20 }, (_, n) => [jti(1000 + n), { err: 'e'.repeat(64), description: 'd'.repeat(200) }]));
    const largest = { maxEvents: 1000, returnImmediately: true, ack: Array.from({ length: 100 }, (_, n) => jti(n)), setErrs };
    expect(JSON.stringify(largest).length).toBeLessThan(16 * 1024);
    expect((await call(token, 'POST', `/ssf/poll?stream_id=${id}`, largest)).statusCode).toBe(200);
    expectProblem(await call(token, 'POST', `/ssf/poll?stream_id=${id}`, { ...largest, ack: [...largest.ack, jti(100)] }), 400);
    expectProblem(await call(token, 'POST', `/ssf/poll?stream_id=${id}`, { ...largest, setErrs: { ...setErrs, [jti(2000)]: { err: 'e' } } }), 400);
  });

  it('answers a second poll of a stream while the first is still waiting 429 with Retry-After, and takes the next one once the first has answered', async () => {
    const { token } = await newReceiver('eager poller');
    const id = (await call(token, 'POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } })).json<{ stream_id: string }>().stream_id;
    const waiting = call(token, 'POST', `/ssf/poll?stream_id=${id}`, {});
    // Well inside the first poll's wait (TESSERA_SSF_POLL_WAIT=2 s): it is being answered when the second comes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await call(token, 'POST', `/ssf/poll?stream_id=${id}`, { returnImmediately: true });
    expectProblem(second, 429);
    expect(second.headers['retry-after']).toBe('1');
    expect((await waiting).statusCode).toBe(200);
    expect((await call(token, 'POST', `/ssf/poll?stream_id=${id}`, { returnImmediately: true })).statusCode).toBe(200);
  });

  it('answers a poll that returns at once with nothing to answer 429 with Retry-After within TESSERA_SSF_EMPTY_POLL_INTERVAL (5 s) of the last; never one with a SET to answer or an acknowledgment, nor a long poll', async () => {
    const { token, receiver_id } = await newReceiver('empty poller');
    const id = (await call(token, 'POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } })).json<{ stream_id: string }>().stream_id;
    const quick = () => call(token, 'POST', `/ssf/poll?stream_id=${id}`, { returnImmediately: true });
    expect((await quick()).json()).toEqual({ sets: {}, moreAvailable: false });
    const refused = await quick();
    expectProblem(refused, 429);
    expect(refused.json()).toMatchObject({ type: 'urn:tessera:problem:too-many-requests', status: 429 });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(5);
    // A long poll is not refused: it waits TESSERA_SSF_POLL_WAIT (2 s) and answers the empty set.
    expect((await call(token, 'POST', `/ssf/poll?stream_id=${id}`, { returnImmediately: false })).json()).toEqual({ sets: {}, moreAvailable: false });
    // A SET to answer is answered at once, still within the interval.
    await call(token, 'POST', '/ssf/subjects/add', { stream_id: id, subject: { format: 'iss_sub', iss: publicUrl, sub: 'acct-a' } });
    const pair = (await app.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token', payload: { api_login_id: 'tsl_a', transaction_key: 'tsk_a' } })).json<{ refresh_token: string }>();
    expect((await app.inject({ method: 'POST', url: '/v5/Authorization/revoke-oauth-token', payload: { refresh_token: pair.refresh_token } })).statusCode).toBe(200);
    await expect
      .poll(async () => (await adminApp.inject({ method: 'GET', url: `/admin/v1/ssf/receivers/${receiver_id}/streams`, headers: { authorization: `Bearer ${adminToken}` } })).json<{ streams: { pending_sets: number }[] }>().streams[0]?.pending_sets)
      .toBe(1);
    const answered = await quick();
    expect(answered.statusCode).toBe(200);
    const jtis = Object.keys(answered.json<{ sets: Record<string, string> }>().sets);
    expect(jtis).toHaveLength(1);
    // An acknowledgment is taken, though nothing is left to answer.
    const acknowledged = await call(token, 'POST', `/ssf/poll?stream_id=${id}`, { returnImmediately: true, ack: jtis });
    expect(acknowledged.statusCode).toBe(200);
    expect(acknowledged.json()).toEqual({ sets: {}, moreAvailable: false });
    expectProblem(await quick(), 429);
  });

  it('a long poll waits for a SET and answers as soon as one arrives; with nothing, it answers an empty set after TESSERA_SSF_POLL_WAIT', async () => {
    const { token } = await newReceiver('long poller');
    const id = (await call(token, 'POST', '/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } })).json<{ stream_id: string }>().stream_id;
    const started = performance.now();
    const empty = await call(token, 'POST', `/ssf/poll?stream_id=${id}`, {});
    expect(empty.json()).toEqual({ sets: {}, moreAvailable: false });
    expect(performance.now() - started).toBeGreaterThan(1_500);
    const waiting = call(token, 'POST', `/ssf/poll?stream_id=${id}`, {});
    await new Promise((resolve) => setTimeout(resolve, 200));
    await call(token, 'POST', '/ssf/verify', { stream_id: id, state: 'wake' });
    const answered = (await waiting).json<{ sets: Record<string, string> }>();
    expect(Object.keys(answered.sets)).toHaveLength(1);
  });
});
