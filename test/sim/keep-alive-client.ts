import { Agent, request } from 'node:https';

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  json<T>(): T;
}

/**
 * HTTPS to one region over kept-alive connections, trusting the regions' certificate: the
 * simulation polls for seconds at a time, and a TLS handshake per poll would load the very
 * server whose answer it is timing.
 */
export function keepAliveClient(origin: string, ca: Buffer, maxSockets = 16, fromAddress?: string) {
  // With `fromAddress`, every kept-alive connection starts there: a client the server's throttles count apart.
  const agent = new Agent({ keepAlive: true, maxSockets, ca, ...(fromAddress ? { localAddress: fromAddress } : {}) });
  function send(path: string, options: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {}): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const outgoing = request(
        new URL(path, origin),
        // A source address of its own means a connection of its own: the server's throttles count by address.
        { method: options.method ?? 'GET', headers: options.headers, ...(options.localAddress ? { agent: false, ca, localAddress: options.localAddress } : { agent }) },
        (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
          incoming.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, text, json: <T>() => JSON.parse(text) as T });
          });
          incoming.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(options.body);
    });
  }
  return {
    origin,
    send,
    postJson: (path: string, body: unknown, localAddress?: string) =>
      send(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...(localAddress ? { localAddress } : {}) }),
    close: () => agent.destroy(),
  };
}

export type KeepAliveClient = ReturnType<typeof keepAliveClient>;
