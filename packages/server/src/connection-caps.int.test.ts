import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { capConnections, type RefusalReason } from './connection-caps.js';

/** The caps on a plain TCP listener, the way Node hands connections to the HTTPS server. */
let server: Server;
const clients: Socket[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  await new Promise<void>((done) => server.close(() => done()));
});

async function listen(caps: { maxConnections: number; maxConnectionsPerAddress: number }, refused: RefusalReason[]): Promise<number> {
  server = createServer((socket) => {
    socket.on('error', () => undefined);
    // A connection the caps kept is greeted; one they closed (as it arrived) never is.
    socket.write('kept');
  });
  capConnections(server, caps, (reason) => refused.push(reason));
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

/**
 * Connects from a source address and reports whether the server kept the connection open: its
 * greeting arrives, or the connection closes first. Either is an event; no timer decides.
 */
async function kept(port: number, localAddress: string): Promise<boolean> {
  const socket = connect({ host: '127.0.0.1', port, localAddress });
  clients.push(socket);
  socket.on('error', () => undefined);
  return new Promise((resolve) => {
    socket.once('data', () => resolve(true));
    socket.once('close', () => resolve(false));
  });
}

describe('connection caps', () => {
  it('close a connection over the per-address cap, while other addresses still get in', async () => {
    const refused: RefusalReason[] = [];
    const port = await listen({ maxConnections: 100, maxConnectionsPerAddress: 2 }, refused);
    expect([await kept(port, '127.0.0.1'), await kept(port, '127.0.0.1'), await kept(port, '127.0.0.1')]).toEqual([true, true, false]);
    expect(await kept(port, '127.0.0.2')).toBe(true);
    expect(refused).toEqual(['per_address']);
  });

  it('give an address its place back when one of its connections closes', async () => {
    const port = await listen({ maxConnections: 100, maxConnectionsPerAddress: 1 }, []);
    expect(await kept(port, '127.0.0.1')).toBe(true);
    const closing = clients[0]!;
    closing.destroy();
    // The server has seen the close once its side of the socket is gone from its count.
    await expect.poll(() => new Promise<number>((counted) => server.getConnections((_, count) => counted(count)))).toBe(0);
    expect(await kept(port, '127.0.0.1')).toBe(true);
  });

  it('close a connection over the total cap, whatever its address', async () => {
    const refused: RefusalReason[] = [];
    const port = await listen({ maxConnections: 2, maxConnectionsPerAddress: 10 }, refused);
    expect([await kept(port, '127.0.0.1'), await kept(port, '127.0.0.2'), await kept(port, '127.0.0.3')]).toEqual([true, true, false]);
    expect(refused).toEqual(['total']);
  });
});
