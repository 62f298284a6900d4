import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import Fastify from 'fastify';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ssfPushHandler, ssfPushMiddleware } from './ssf-push-handlers.js';
import { ssfPushRoute } from './ssf-push-route.js';
import { createSsfReceiver, type SsfReceiver } from './ssf-receiver.js';
import { ssfEventTypes } from './ssf-set-mapping.js';

/**
 * The push endpoint (RFC 8935) of each server kind against a transmitter on a real socket that
 * answers the SSF metadata, its JWKS (counting loads) and stream management as Tessera's does, with
 * SETs signed here with ES256 keys it publishes (or not).
 */
interface Key {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

async function newKey(kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

const listen = async (server: Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP port');
  return address.port;
};
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

const authorizationHeader = 'Bearer the-receiver-own-secret';
const accountId = 'acct-1';

let transmitter: Server;
let issuer = '';
let published: Key[] = [];
let jwksLoads = 0;
let verificationStates: string[] = [];
let work = '';
const cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  published = [await newKey('key-1')];
  jwksLoads = 0;
  verificationStates = [];
  work = mkdtempSync(join(tmpdir(), 'ssf-push-'));
  let streamAud = '';
  transmitter = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = chunks.length === 0 ? {} : (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { delivery?: { endpoint_url: string }; state?: string });
      const json = (status: number, answer: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      const path = new URL(request.url!, issuer).pathname;
      if (path === '/.well-known/ssf-configuration') {
        return json(200, { issuer, jwks_uri: `${issuer}/jwks`, configuration_endpoint: `${issuer}/ssf/streams`, add_subject_endpoint: `${issuer}/ssf/subjects/add`, verification_endpoint: `${issuer}/ssf/verify` });
      }
      if (path === '/jwks') {
        jwksLoads += 1;
        return json(200, { keys: published.map((key) => key.publicJwk) });
      }
      if (request.headers.authorization !== 'Bearer tss_receiver') return json(401, { detail: 'no receiver token' });
      if (path === '/ssf/streams' && request.method === 'POST') {
        streamAud = body.delivery!.endpoint_url;
        return json(201, { stream_id: 'stream-1', aud: streamAud, delivery: body.delivery });
      }
      if (path === '/ssf/streams') return json(200, { stream_id: 'stream-1', aud: streamAud, delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: streamAud } });
      if (path === '/ssf/subjects/add') return json(200, {});
      if (path === '/ssf/verify') {
        verificationStates.push(body.state!);
        return response.writeHead(204).end();
      }
      return json(404, {});
    });
  });
  issuer = `http://127.0.0.1:${await listen(transmitter)}`;
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await close(transmitter);
  rmSync(work, { recursive: true, force: true });
});

const nowSeconds = () => Math.floor(Date.now() / 1000);

async function signSet(key: Key, claims: { aud: string; events: Record<string, unknown>; sub_id: unknown; iss?: string }): Promise<string> {
  return new SignJWT({ sub_id: claims.sub_id, events: claims.events, txn: 'txn-1' })
    .setProtectedHeader({ alg: 'ES256', typ: 'secevent+jwt', kid: key.kid })
    .setIssuer(claims.iss ?? issuer)
    .setAudience(claims.aud)
    .setIssuedAt()
    .setJti(`jti-${Math.random()}`)
    .sign(key.privateKey);
}

const familyRevoked = (family: string) => ({
  sub_id: { format: 'complex', user: { format: 'iss_sub', iss: issuer, sub: accountId }, session: { format: 'opaque', id: family } },
  events: { [ssfEventTypes.sessionRevoked]: { event_timestamp: nowSeconds(), tessera_rejects_until: nowSeconds() + 600 } },
});

type Mount = (receiverFor: (endpoint: string) => SsfReceiver) => Promise<{ endpoint: string }>;

/** Each server kind, with the push endpoint at /ssf/events. */
const servers: Record<string, Mount> = {
  'node:http': async (receiverFor) => {
    // The endpoint URL is known once the server listens; requests come only after the handler exists.
    const server = createServer((request: IncomingMessage, response: ServerResponse) => handler(request, response));
    const endpoint = `http://127.0.0.1:${await listen(server)}/ssf/events`;
    const handler = ssfPushHandler(receiverFor(endpoint));
    cleanups.push(() => close(server));
    return { endpoint };
  },
  Express: async (receiverFor) => {
    const app = express();
    app.post('/ssf/events', (request, response, next) => middleware(request, response, next));
    const server = createServer(app);
    const endpoint = `http://127.0.0.1:${await listen(server)}/ssf/events`;
    const middleware = ssfPushMiddleware(receiverFor(endpoint));
    cleanups.push(() => close(server));
    return { endpoint };
  },
  fastify: async (receiverFor) => {
    const app = Fastify();
    const port = await (async () => {
      const probe = createServer();
      const free = await listen(probe);
      await close(probe);
      return free;
    })();
    const endpoint = `http://127.0.0.1:${port}/ssf/events`;
    await app.register(ssfPushRoute, { receiver: receiverFor(endpoint), path: '/ssf/events' });
    await app.listen({ port, host: '127.0.0.1' });
    cleanups.push(() => app.close());
    return { endpoint };
  },
};

const post = (endpoint: string, body: string, headers: Record<string, string> = {}) =>
  fetch(endpoint, { method: 'POST', headers: { authorization: authorizationHeader, 'content-type': 'application/secevent+jwt', ...headers }, body });

describe.each(Object.entries(servers))('the push endpoint on %s', (_name, mount) => {
  /** A receiver pushed to at the server's endpoint, made ready with the verification SET the transmitter was asked for. */
  async function readyReceiver(options: { stateFile?: string } = {}): Promise<{ receiver: SsfReceiver; endpoint: string }> {
    let receiver: SsfReceiver | undefined;
    const { endpoint } = await mount((endpointUrl) => {
      receiver = createSsfReceiver({
        transmitterUrl: issuer,
        receiverToken: 'tss_receiver',
        delivery: { method: 'push', endpointUrl, authorizationHeader },
        subjects: { accounts: [accountId] },
        keyRefreshCooldownMs: 0,
        ...options,
      });
      return receiver;
    });
    cleanups.push(() => receiver!.close());
    await expect.poll(() => verificationStates.length).toBe(1);
    const verification = await signSet(published[0]!, { aud: endpoint, sub_id: { format: 'opaque', id: 'stream-1' }, events: { [ssfEventTypes.verification]: { state: verificationStates[0] } } });
    expect((await post(endpoint, verification)).status).toBe(202);
    await receiver!.ready;
    return { receiver: receiver!, endpoint };
  }

  it('takes a signed SET with 202 and the projection refuses the family', async () => {
    const { receiver, endpoint } = await readyReceiver();
    const answer = await post(endpoint, await signSet(published[0]!, { aud: endpoint, ...familyRevoked('fam-1') }));
    expect(answer.status).toBe(202);
    expect(receiver.projection.isRejected('fam-1', 0)).toBe(true);
    expect(receiver.projection.isRejected('fam-2', 0)).toBe(false);
  });

  it('refuses a SET whose signature does not verify: 400 invalid_request, nothing applied', async () => {
    const { receiver, endpoint } = await readyReceiver();
    const forger = await newKey('key-1');
    const answer = await post(endpoint, await signSet(forger, { aud: endpoint, ...familyRevoked('fam-1') }));
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ err: 'invalid_request', description: expect.stringContaining('signature') });
    expect(receiver.projection.isRejected('fam-1', 0)).toBe(false);
  });

  it("refuses a SET for another stream's aud, or from another issuer", async () => {
    const { receiver, endpoint } = await readyReceiver();
    const otherAud = await post(endpoint, await signSet(published[0]!, { aud: 'https://elsewhere.example/ssf', ...familyRevoked('fam-1') }));
    expect([otherAud.status, await otherAud.json()]).toEqual([400, { err: 'invalid_audience', description: expect.any(String) }]);
    const otherIssuer = await post(endpoint, await signSet(published[0]!, { aud: endpoint, iss: 'https://evil.example', ...familyRevoked('fam-1') }));
    expect([otherIssuer.status, (await otherIssuer.json()) as unknown]).toEqual([400, { err: 'invalid_issuer', description: expect.any(String) }]);
    expect(receiver.projection.isRejected('fam-1', 0)).toBe(false);
  });

  it('loads the JWKS again for an unknown kid: a key published since is taken; a kid still unknown is invalid_key', async () => {
    const { receiver, endpoint } = await readyReceiver();
    const rotated = await newKey('key-2');
    published.push(rotated);
    const loadsBefore = jwksLoads;
    expect((await post(endpoint, await signSet(rotated, { aud: endpoint, ...familyRevoked('fam-new-key') }))).status).toBe(202);
    expect(jwksLoads).toBe(loadsBefore + 1);
    expect(receiver.projection.isRejected('fam-new-key', 0)).toBe(true);
    const unknown = await post(endpoint, await signSet(await newKey('key-never-published'), { aud: endpoint, ...familyRevoked('fam-x') }));
    expect([unknown.status, await unknown.json()]).toEqual([400, { err: 'invalid_key', description: expect.any(String) }]);
    expect(jwksLoads).toBe(loadsBefore + 2);
    expect(receiver.projection.isRejected('fam-x', 0)).toBe(false);
  });

  it('refuses a body over the bound with 400 invalid_request, and another media type', async () => {
    const { endpoint } = await readyReceiver();
    const oversized = await post(endpoint, 'e'.repeat(65_537));
    expect([oversized.status, await oversized.json()]).toEqual([400, { err: 'invalid_request', description: 'the SET is larger than 65536 bytes' }]);
    const json = await post(endpoint, await signSet(published[0]!, { aud: endpoint, ...familyRevoked('fam-1') }), { 'content-type': 'application/json' });
    expect([json.status, await json.json()]).toEqual([400, { err: 'invalid_request', description: 'the body must be application/secevent+jwt' }]);
  });

  it('refuses a push without the Authorization header the stream was made with: 401 authentication_failed', async () => {
    const { receiver, endpoint } = await readyReceiver();
    const set = await signSet(published[0]!, { aud: endpoint, ...familyRevoked('fam-1') });
    for (const authorization of ['Bearer the-receiver-own-secreT', 'Bearer the-receiver-own-secre', 'the-receiver-own-secret', '']) {
      const answer = await post(endpoint, set, { authorization });
      expect([answer.status, await answer.json()], authorization).toEqual([401, { err: 'authentication_failed', description: expect.any(String) }]);
    }
    expect(receiver.projection.isRejected('fam-1', 0)).toBe(false);
  });

  it('keeps what it applied in the state file: a new receiver on the same file refuses the family before any SET', async () => {
    const stateFile = join(work, 'ssf-state.jsonl');
    const { receiver, endpoint } = await readyReceiver({ stateFile });
    expect((await post(endpoint, await signSet(published[0]!, { aud: endpoint, ...familyRevoked('fam-kept') }))).status).toBe(202);
    await receiver.close();
    const again = createSsfReceiver({ transmitterUrl: issuer, receiverToken: 'tss_receiver', delivery: { method: 'push', endpointUrl: endpoint, authorizationHeader }, stateFile });
    cleanups.push(() => again.close());
    await expect.poll(() => again.streamId).toBe('stream-1');
    expect(again.projection.isRejected('fam-kept', 0)).toBe(true);
    expect(again.projection.isRejected('fam-other', 0)).toBe(false);
  });
});
