import { Agent, request } from 'node:https';

/** What fetch takes and gives, as the clients under test call it. */
export type HttpsFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * Node 20's global fetch takes no CA, and NODE_EXTRA_CA_CERTS is read only at start-up, so
 * a test (not the client under test) adapts node:https to the fetch signature, trusting the
 * server's certificate by its file. @tessera/client and openid-client both take such a `fetch`.
 */
export function httpsFetch(ca: Buffer): HttpsFetch {
  const agent = new Agent({ ca, keepAlive: true, maxSockets: 32 });
  return async (input, init = {}) => {
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => (headers[name] = value));
    const body = await new Response(init.body ?? null).arrayBuffer();
    if (body.byteLength > 0 && !headers['content-type'] && typeof init.body === 'string') headers['content-type'] = 'text/plain;charset=UTF-8';
    if (body.byteLength > 0 && !headers['content-type'] && init.body instanceof URLSearchParams) headers['content-type'] = 'application/x-www-form-urlencoded;charset=UTF-8';
    return new Promise<Response>((resolveResponse, reject) => {
      const outgoing = request(new URL(input instanceof Request ? input.url : String(input)), { method: init.method ?? 'GET', headers, agent, signal: init.signal ?? undefined }, (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('error', reject);
        incoming.on('end', () => {
          const status = incoming.statusCode ?? 0;
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(incoming.headers)) {
            if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
          }
          const nullBody = status === 204 || status === 304 || init.method === 'HEAD';
          resolveResponse(new Response(nullBody ? null : Buffer.concat(chunks), { status, headers: responseHeaders }));
        });
      });
      outgoing.on('error', reject);
      outgoing.end(body.byteLength > 0 ? Buffer.from(body) : undefined);
    });
  };
}
