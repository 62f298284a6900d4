import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { egressPolicy } from '@tessera/egress';
import { PushClient, responseBodyLimit } from './push-client.js';

const loopbackAllowed = { policy: egressPolicy({ TESSERA_EGRESS_ALLOW: ['127.0.0.1'] }), allowHttp: true };

/**
 * The push client against a real HTTP receiver on loopback that answers without end: the answer is
 * read up to its bound and the connection is cut, so a hostile receiver costs neither bandwidth nor
 * the push's deadline.
 */
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A receiver that answers `status` and then streams its body for as long as the connection lasts; resolves the bytes it wrote once it is cut off. */
async function endlessReceiver(status: number, start: string): Promise<{ url: string; written: Promise<number> }> {
  let report: (bytes: number) => void = () => undefined;
  const written = new Promise<number>((resolve) => (report = resolve));
  server = createServer((request, response) => {
    request.resume();
    response.writeHead(status, { 'content-type': 'application/json' });
    let bytes = Buffer.byteLength(start);
    response.write(start);
    const chunk = Buffer.alloc(16_384, 0x20);
    const more = (): void => {
      while (!response.destroyed) {
        bytes += chunk.length;
        if (!response.write(chunk)) {
          response.once('drain', more);
          return;
        }
      }
    };
    response.once('close', () => report(bytes));
    more();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`, written };
}

describe('the push client', () => {
  it('cuts off an answer past its bound instead of reading it until the deadline', async () => {
    const receiver = await endlessReceiver(202, '');
    const client = new PushClient(30_000, loopbackAllowed);
    try {
      const outcome = await client.push(receiver.url, 'a.b.c', undefined);
      expect(outcome).toEqual({ kind: 'delivered', status: 202 });
      // What the receiver got out before the cut: socket buffers, not the 30 s of a loopback stream (gigabytes).
      expect(await receiver.written).toBeLessThan(16 * 1024 * 1024);
    } finally {
      client.close();
    }
  });

  it('an endless refusal body is a failure to retry (its code unreadable), not a drop', async () => {
    const receiver = await endlessReceiver(400, '{"err":"invalid_request"');
    const client = new PushClient(30_000, loopbackAllowed);
    try {
      expect(await client.push(receiver.url, 'a.b.c', undefined)).toEqual({ kind: 'failed', reason: 'HTTP 400' });
      expect(responseBodyLimit).toBeLessThanOrEqual(16_384);
    } finally {
      client.close();
    }
  });
});

describe('the push client under the egress policy', () => {
  it('refuses loopback, private and metadata addresses before connecting, with the same outcome for an open port and a closed one', async () => {
    let connections = 0;
    server = createServer((request, response) => response.writeHead(202).end());
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const open = (server.address() as AddressInfo).port;
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    // By default, as TESSERA_EGRESS_ALLOW unset: even with plain http allowed for development.
    const client = new PushClient(5_000, { policy: egressPolicy({}), allowHttp: true });
    try {
      const outcomes = [];
      for (const url of [`http://127.0.0.1:${open}/events`, `http://127.0.0.1:${closed}/events`, `https://localhost:${open}/events`, `https://localhost:${closed}/events`, 'http://169.254.169.254/latest/meta-data/', 'http://10.1.2.3/events', 'http://[::1]:80/events']) {
        outcomes.push(await client.push(url, 'a.b.c', 'Bearer receiver-secret'));
      }
      for (const outcome of outcomes) expect(outcome).toMatchObject({ kind: 'failed', reason: expect.stringMatching(/refused/) });
      // An open port and a closed one are told apart by nothing a receiver can see.
      expect(outcomes[0]).toEqual({ ...outcomes[1], reason: outcomes[0]!.kind === 'failed' ? outcomes[0]!.reason : '' });
      expect(outcomes[2]).toEqual(outcomes[3]);
      expect(connections).toBe(0);
    } finally {
      client.close();
    }
  });

  it('checks a hostname at connect time, after resolution: a name that resolves to a private address is refused', async () => {
    const client = new PushClient(5_000, { policy: egressPolicy({}, { resolve: async () => [{ address: '10.0.0.7', family: 4 }] }), allowHttp: false });
    try {
      expect(await client.push('https://receiver.example.test/events', 'a.b.c', undefined)).toEqual({ kind: 'failed', reason: expect.stringContaining('10.0.0.7') });
    } finally {
      client.close();
    }
  });

  it('refuses plain http unless TESSERA_SSF_ALLOW_HTTP_PUSH or TESSERA_EGRESS_ALLOW names the host', async () => {
    const client = new PushClient(5_000, { policy: egressPolicy({ TESSERA_EGRESS_ALLOW: ['10.0.0.0/8'] }, { resolve: async () => [{ address: '10.0.0.7', family: 4 }] }), allowHttp: false });
    try {
      expect(await client.push('http://receiver.example.test/events', 'a.b.c', undefined)).toEqual({ kind: 'failed', reason: 'refused by the egress policy: plain http' });
    } finally {
      client.close();
    }
  });
});
