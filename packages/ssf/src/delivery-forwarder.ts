import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, rootCertificates } from 'node:tls';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HolderAddress } from './delivery/delivery-lease.js';
import { SsfDeliveryHolderUnavailable } from './ssf-errors.js';

/** Marks a request one replica forwarded to the lease holder: it is never forwarded again. */
export const forwardedHeader = 'tessera-ssf-forwarded';

/** What a forward passes on, and what it relays back: nothing else of either side crosses. */
const passedOn = ['authorization', 'content-type'] as const;
const relayed = ['content-type', 'retry-after', 'www-authenticate', 'cache-control'] as const;

export interface DeliveryForwarding {
  /** True when this replica holds a valid lease: it answers itself. */
  readonly servesHere: () => boolean;
  /** Relays the request to the holder, within `timeoutMs`; throws SsfDeliveryHolderUnavailable when it cannot. */
  readonly forward: (request: FastifyRequest, reply: FastifyReply, timeoutMs: number) => Promise<FastifyReply>;
}

export interface ForwarderOptions {
  readonly servesHere: () => boolean;
  /** The holder's address from the newest lease event read; undefined: none holds it. */
  readonly holder: () => HolderAddress | undefined;
  /**
   * Certificates trusted beside the system's roots: the one this process serves (TESSERA_TLS_CERT,
   * or its self-signed one: replicas that share it trust each other by it) and NODE_EXTRA_CA_CERTS
   * (an explicit list of CAs replaces Node's, extra ones included).
   */
  readonly trustedCertificateFiles: readonly string[];
}

/**
 * Polls and status reads answered by the lease holder, whichever replica a receiver reached: they
 * depend on the holder's memory (the pending SETs, the drops), so another replica relays them
 * (method, path and query, Authorization, content type and body; back: status, the headers that
 * matter and the body). A forwarded request that reaches a replica which is not the holder either
 * is answered 503, never forwarded on.
 */
export function createDeliveryForwarding(options: ForwarderOptions): DeliveryForwarding {
  let trusted: string[] | undefined;
  const trust = () => (trusted ??= [...rootCertificates, ...options.trustedCertificateFiles.flatMap(certificatesIn)]);
  return {
    servesHere: options.servesHere,
    async forward(request, reply, timeoutMs) {
      if (request.headers[forwardedHeader] !== undefined) throw new SsfDeliveryHolderUnavailable('this request was forwarded to a replica that does not hold the delivery lease; ask again in a moment');
      const holder = options.holder();
      if (holder === undefined) throw new SsfDeliveryHolderUnavailable('no replica holds the Shared Signals delivery lease now; ask again in a moment');
      const body = request.body === undefined || request.body === null ? undefined : Buffer.from(JSON.stringify(request.body));
      const headers: Record<string, string> = { [forwardedHeader]: '1' };
      for (const name of passedOn) {
        const value = request.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      if (body !== undefined) headers['content-length'] = String(body.length);
      let answer: { status: number; headers: IncomingMessage['headers']; body: Buffer };
      try {
        answer = await send(new URL(request.url, holder.url), holder.certificateSha256, request.method, headers, body, timeoutMs, trust);
      } catch (error) {
        throw new SsfDeliveryHolderUnavailable('the replica that holds the Shared Signals delivery lease did not answer; ask again in a moment', { cause: error });
      }
      reply.code(answer.status);
      for (const name of relayed) {
        const value = answer.headers[name];
        if (value !== undefined) reply.header(name, value);
      }
      return reply.send(answer.body);
    },
  };
}

function certificatesIn(file: string): string[] {
  try {
    return [readFileSync(file, 'utf8')];
  } catch {
    // Not there (no self-signed certificate made yet): the others and the system's roots.
    return [];
  }
}

function send(
  url: URL,
  certificateSha256: string | undefined,
  method: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  timeoutMs: number,
  trust: () => string[],
): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const signal = AbortSignal.timeout(timeoutMs);
    const options = { method, headers, signal };
    const onAnswer = (incoming: IncomingMessage) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 502, headers: incoming.headers, body: Buffer.concat(chunks) }));
      incoming.on('error', reject);
    };
    const outgoing =
      url.protocol !== 'https:'
        ? httpRequest(url, options, onAnswer)
        : certificateSha256 === undefined
          ? httpsRequest(url, { ...options, ca: trust() }, onAnswer)
          : httpsRequest(url, { ...options, createConnection: pinnedConnection(url, certificateSha256) }, onAnswer);
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/**
 * A TLS connection that is handed to the request only once the certificate it was shown is the
 * one the holder published in the log: nothing of the request (its Authorization) is written
 * before. Replicas that each made a self-signed certificate, named for nobody, reach each other so.
 */
function pinnedConnection(url: URL, certificateSha256: string) {
  return (_options: unknown, connected: (error: Error | null, socket: Duplex) => void): undefined => {
    // The certificate is checked below, against the one the log names, not against a CA and a name.
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const socket = tlsConnect({ host, port: Number(url.port || 443), ...(isIP(host) === 0 ? { servername: host } : {}), rejectUnauthorized: false });
    const failed = (error: Error) => connected(error, socket);
    socket.once('error', failed);
    socket.once('secureConnect', () => {
      socket.off('error', failed);
      const presented = socket.getPeerCertificate().fingerprint256;
      if (presented === certificateSha256) {
        connected(null, socket);
        return;
      }
      socket.destroy();
      connected(new Error(`the replica at ${url.host} presented a certificate other than the one its lease names`), socket);
    });
    return undefined;
  };
}

