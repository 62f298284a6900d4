import { readFileSync } from 'node:fs';
import { connect as connectTcp } from 'node:net';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Connection limits and timeouts against the real server. Observed before: a body that stalls after its
 * headers held its connection for minutes, and with `ulimit -n 300`, 266 of them made every
 * rightful request fail. The server here runs under that same open-file limit, with timeouts and
 * caps made small so the test is quick.
 */
const requestTimeoutSeconds = 3;
const perAddressCap = 50;
let tessera: TesseraProcess;
let account: Credentials;
let port: number;
let ca: Buffer;

beforeAll(async () => {
  tessera = await startTessera(
    {
      TESSERA_HEADERS_TIMEOUT: '1',
      TESSERA_REQUEST_TIMEOUT: String(requestTimeoutSeconds),
      TESSERA_MAX_CONNECTIONS: '200',
      TESSERA_MAX_CONNECTIONS_PER_ADDRESS: String(perAddressCap),
    },
    { openFilesLimit: 300 },
  );
  account = await tessera.createAccount();
  port = Number(new URL(tessera.baseUrl).port);
  ca = readFileSync(join(tessera.dataDir, 'tls', 'self-signed.crt'));
});
afterAll(async () => {
  await tessera?.stop();
});

interface Stalled {
  /** Resolves once the headers and the first body byte are written, or the server refused the connection. */
  readonly sent: Promise<'sent' | 'refused'>;
  /** Resolves when the connection closes, with what the server wrote and when. */
  readonly closed: Promise<{ text: string; at: number }>;
  readonly socket: TLSSocket;
  isOpen(): boolean;
}

/** Full headers announcing 16000 bytes of JSON, one byte of it, then nothing. */
function stallBody(localAddress: string): Stalled {
  let text = '';
  let open = true;
  // TLS over a TCP socket bound to the source address (tls.connect's types do not take localAddress).
  const socket = connect({ socket: connectTcp({ host: '127.0.0.1', port, localAddress }), servername: 'localhost', ca });
  const sent = new Promise<'sent' | 'refused'>((resolve) => {
    socket.once('secureConnect', () => {
      socket.write(
        'POST /v5/Authorization/get-oauth-token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 16000\r\n\r\n{',
        () => resolve('sent'),
      );
    });
    socket.once('close', () => resolve('refused'));
  });
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  // A refused connection is reset; the close that follows is what the test reads.
  socket.on('error', () => undefined);
  const closed = new Promise<{ text: string; at: number }>((resolve) =>
    socket.once('close', () => {
      open = false;
      resolve({ text, at: Date.now() });
    }),
  );
  return { sent, closed, socket, isOpen: () => open };
}

describe('a stalled body', () => {
  it(`is answered 408 problem+json and closed within TESSERA_REQUEST_TIMEOUT (${requestTimeoutSeconds} s here)`, async () => {
    const started = Date.now();
    const stalled = stallBody('127.0.0.1');
    expect(await stalled.sent).toBe('sent');
    const { text, at } = await stalled.closed;
    const elapsedMs = at - started;
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(text).toMatch(/\r\ncontent-type: application\/problem\+json/i);
    expect(elapsedMs).toBeGreaterThanOrEqual(requestTimeoutSeconds * 1000 - 100);
    // Node looks for expired requests every 250 ms here (a quarter of the 1 s headers timeout).
    expect(elapsedMs).toBeLessThan(requestTimeoutSeconds * 1000 + 1000);
  });
});

describe('300 stalled connections from one address', () => {
  it('do not stop a rightful client on another address (127.0.0.2) from getting a token, and are all closed in time', async () => {
    const started = Date.now();
    const attackers = Array.from({ length: 300 }, () => stallBody('127.0.0.1'));
    const outcomes = await Promise.all(attackers.map((attacker) => attacker.sent));
    const rightful = await tessera.postJson(
      '/v5/Authorization/get-oauth-token',
      { api_login_id: account.api_login_id, transaction_key: account.transaction_key },
      {},
      { localAddress: '127.0.0.2' },
    );
    const heldMeanwhile = attackers.filter((attacker) => attacker.isOpen()).length;
    expect(rightful.status).toBe(200);
    // The figure for the closing note.
    console.info(
      `stalled connections: 300 opened from 127.0.0.1, ${outcomes.filter((o) => o === 'sent').length} got their headers in, ${heldMeanwhile} held open while 127.0.0.2 got its token`,
    );
    // Still inside their request timeout: the cap, not the timeout, is what let the rightful client in.
    expect(Date.now() - started).toBeLessThan(requestTimeoutSeconds * 1000);
    expect(heldMeanwhile).toBeGreaterThan(0);
    expect(heldMeanwhile).toBeLessThanOrEqual(perAddressCap);

    const closings = await Promise.all(attackers.map((attacker) => attacker.closed));
    expect(Math.max(...closings.map(({ at }) => at)) - started).toBeLessThan(requestTimeoutSeconds * 1000 + 2000);

    const metrics = await tessera.adminRequest('/metrics');
    const refused = Number(metrics.text.match(/^tessera_connections_refused_total\{reason="per_address"\} (\d+)/m)?.[1] ?? NaN);
    expect(refused).toBeGreaterThanOrEqual(300 - perAddressCap);
  });
});
