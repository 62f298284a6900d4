import { X509Certificate } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryForwarding, forwardedHeader } from './delivery-forwarder.js';
import type { HolderAddress } from './delivery/delivery-lease.js';

/**
 * The forward to the lease holder against a real HTTPS server with a self-signed certificate named
 * for nobody: reached when its certificate is the one the lease names, refused (nothing sent) when not.
 */
let holderServer: Server;
let holderUrl = '';
let fingerprint = '';
const seen: { authorization: string | undefined; forwarded: string | undefined; body: string }[] = [];

beforeAll(async () => {
  const pems = await generate([{ name: 'commonName', value: 'nobody.invalid' }], { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' });
  fingerprint = new X509Certificate(pems.cert).fingerprint256;
  holderServer = createServer({ cert: pems.cert, key: pems.private }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      seen.push({ authorization: request.headers.authorization, forwarded: request.headers[forwardedHeader] as string | undefined, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(200, { 'content-type': 'application/json', 'x-internal': 'not relayed' }).end('{"sets":{},"moreAvailable":false}');
    });
  });
  await new Promise<void>((resolve) => holderServer.listen(0, '127.0.0.1', resolve));
  holderUrl = `https://127.0.0.1:${(holderServer.address() as AddressInfo).port}`;
});
afterAll(() => holderServer.close());

/** A replica that does not hold the lease, forwarding every poll to `holder`. */
async function replicaForwardingTo(holder: HolderAddress | undefined): Promise<{ app: FastifyInstance; errors: unknown[] }> {
  const forwarding = createDeliveryForwarding({ servesHere: () => false, holder: () => holder, trustedCertificateFiles: [] });
  const app = Fastify();
  const errors: unknown[] = [];
  app.setErrorHandler((error, _request, reply) => {
    errors.push(error);
    return reply.code(503).send();
  });
  app.post('/ssf/poll', (request, reply) => forwarding.forward(request, reply, 2_000));
  await app.ready();
  return { app, errors };
}

const poll = (app: FastifyInstance, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/ssf/poll?stream_id=s1', headers: { authorization: 'Bearer receiver-token', 'content-type': 'application/json', ...headers }, payload: { ack: ['j1'] } });

describe('the forward of a poll to the lease holder', () => {
  it('reaches a holder whose certificate is the one its lease names, passing Authorization and body, relaying status, content type and body', async () => {
    const { app, errors } = await replicaForwardingTo({ url: holderUrl, certificateSha256: fingerprint });
    const answer = await poll(app);
    expect(errors).toEqual([]);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.headers['x-internal']).toBeUndefined();
    expect(answer.json()).toEqual({ sets: {}, moreAvailable: false });
    expect(seen.at(-1)).toEqual({ authorization: 'Bearer receiver-token', forwarded: '1', body: '{"ack":["j1"]}' });
  });

  it('sends nothing to a server whose certificate is another: the holder is unavailable', async () => {
    const before = seen.length;
    const { app, errors } = await replicaForwardingTo({ url: holderUrl, certificateSha256: fingerprint.replace(/^../, fingerprint.startsWith('00') ? '11' : '00') });
    expect((await poll(app)).statusCode).toBe(503);
    expect(errors).toMatchObject([{ code: 'ERR_SSF_DELIVERY_HOLDER_UNAVAILABLE' }]);
    expect(seen.length).toBe(before);
  });

  it('without a pinned certificate, checks the holder against the trusted CAs and its name: a self-signed one for nobody is refused', async () => {
    const before = seen.length;
    const { app, errors } = await replicaForwardingTo({ url: holderUrl });
    expect((await poll(app)).statusCode).toBe(503);
    expect(errors).toMatchObject([{ code: 'ERR_SSF_DELIVERY_HOLDER_UNAVAILABLE' }]);
    expect(seen.length).toBe(before);
  });

  it('answers unavailable with no holder, and for a request forwarded once already', async () => {
    const none = await replicaForwardingTo(undefined);
    expect((await poll(none.app)).statusCode).toBe(503);
    const twice = await replicaForwardingTo({ url: holderUrl, certificateSha256: fingerprint });
    expect((await poll(twice.app, { [forwardedHeader]: '1' })).statusCode).toBe(503);
    expect([...none.errors, ...twice.errors]).toMatchObject([{ code: 'ERR_SSF_DELIVERY_HOLDER_UNAVAILABLE' }, { code: 'ERR_SSF_DELIVERY_HOLDER_UNAVAILABLE' }]);
  });
});
