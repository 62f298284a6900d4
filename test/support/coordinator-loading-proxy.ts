import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a broker's REMOTE listener (which advertises the proxy, so clients stay on
 * it) that can make the group coordinator look as if it were loading: while `loading` is set, every
 * JoinGroup request is answered COORDINATOR_LOAD_IN_PROGRESS (14) by the proxy and never reaches the
 * broker, exactly as a broker answers while it loads __consumer_offsets. Everything else passes as it
 * is. A fresh broker does this by itself only now and then; this does it every time, for as long as
 * a test needs.
 */
export interface CoordinatorLoadingProxy {
  /** Where clients connect: give it as the broker's advertised REMOTE port. */
  readonly port: number;
  /** The broker's REMOTE listener, once the broker is up. */
  target: number | undefined;
  loading: boolean;
  /** JoinGroup requests answered "loading" so far. */
  readonly loadingAnswers: number;
  close(): Promise<void>;
}

const joinGroupKey = 11;
const coordinatorLoadInProgress = 14;

/**
 * A JoinGroup response, versions 2 to 5 (kafkajs 2.2.4 asks for 5): throttle_time_ms, error_code,
 * generation_id, protocol_name, leader, member_id, and no members.
 */
function loadingAnswer(correlationId: number): Buffer {
  const frame = Buffer.alloc(4 + 4 + 20);
  frame.writeInt32BE(frame.length - 4, 0);
  frame.writeInt32BE(correlationId, 4);
  frame.writeInt32BE(0, 8);
  frame.writeInt16BE(coordinatorLoadInProgress, 12);
  frame.writeInt32BE(-1, 14);
  // Three empty strings (a 16-bit length each) and an empty members array (a 32-bit count): zeros.
  return frame;
}

export async function startCoordinatorLoadingProxy(): Promise<CoordinatorLoadingProxy> {
  const sockets = new Set<Socket>();
  const proxy: { target: number | undefined; loading: boolean; loadingAnswers: number } = { target: undefined, loading: true, loadingAnswers: 0 };
  const server: Server = createServer((client) => {
    if (proxy.target === undefined) {
      client.destroy();
      return;
    }
    const broker = createConnection({ host: '127.0.0.1', port: proxy.target });
    for (const socket of [client, broker]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('close', () => broker.destroy());
    broker.on('close', () => client.destroy());
    broker.pipe(client);
    // Requests are framed (a 32-bit size, then api key, api version and correlation id): read whole ones.
    let unread = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      unread = Buffer.concat([unread, chunk]);
      while (unread.length >= 4 && unread.length >= 4 + unread.readInt32BE(0)) {
        const request = unread.subarray(0, 4 + unread.readInt32BE(0));
        unread = unread.subarray(request.length);
        const apiVersion = request.readInt16BE(6);
        if (proxy.loading && request.readInt16BE(4) === joinGroupKey && apiVersion >= 2 && apiVersion <= 5) {
          proxy.loadingAnswers += 1;
          client.write(loadingAnswer(request.readInt32BE(8)));
        } else {
          broker.write(request);
        }
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the coordinator-loading proxy has no port');
  return Object.assign(proxy, {
    port: address.port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
