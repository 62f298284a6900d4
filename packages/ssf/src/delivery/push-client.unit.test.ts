import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PushClient, responseBodyLimit } from './push-client.js';

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
    const client = new PushClient(30_000);
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
    const client = new PushClient(30_000);
    try {
      expect(await client.push(receiver.url, 'a.b.c', undefined)).toEqual({ kind: 'failed', reason: 'HTTP 400' });
      expect(responseBodyLimit).toBeLessThanOrEqual(16_384);
    } finally {
      client.close();
    }
  });
});
