import type { Server, Socket } from 'node:net';

export type RefusalReason = 'total' | 'per_address';

/**
 * Caps the connections a listener holds, in total and per source address, so that one address
 * holding connections open (stalled bodies, idle sockets) cannot take every file descriptor
 * from everyone else. A connection over a cap is closed as it arrives, before its TLS handshake.
 */
export function capConnections(
  server: Server,
  caps: { readonly maxConnections: number; readonly maxConnectionsPerAddress: number },
  onRefused: (reason: RefusalReason) => void,
): void {
  // Node closes connections past maxConnections itself and says so with 'drop'.
  server.maxConnections = caps.maxConnections;
  server.on('drop', () => onRefused('total'));
  const open = new Map<string, number>();
  // Before the TLS server's own listener, so a refused socket never starts a handshake.
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    // A socket already closed by its peer has no address: nothing to count.
    if (address === undefined) return;
    const count = open.get(address) ?? 0;
    if (count >= caps.maxConnectionsPerAddress) {
      onRefused('per_address');
      socket.destroy();
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
