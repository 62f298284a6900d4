import type { ServerOptions as HttpsServerOptions } from 'node:https';
import type { TesseraConfig } from '@tessera/config';
import { tlsPolicy } from './tls-policy.js';

/** How long a connection may take over each part of an exchange, and how many may be open. */
export interface TransportSettings {
  /** TLS handshake, then the request line and headers. */
  readonly headersTimeoutMs: number;
  /** The whole request, body included, from its first byte; past it Node answers 408 and closes. */
  readonly requestTimeoutMs: number;
  /** An idle kept-alive connection between two requests. */
  readonly keepAliveTimeoutMs: number;
  readonly maxConnections: number;
  readonly maxConnectionsPerAddress: number;
  /** Hops whose X-Forwarded-For is believed (TESSERA_TRUSTED_PROXIES); none: the socket's address is the client's. */
  readonly trustedProxies?: readonly string[];
}

const ms = (seconds: number) => Math.max(1, Math.round(seconds * 1000));

export function transportSettings(config: TesseraConfig): TransportSettings {
  return {
    headersTimeoutMs: ms(config.TESSERA_HEADERS_TIMEOUT),
    requestTimeoutMs: ms(config.TESSERA_REQUEST_TIMEOUT),
    keepAliveTimeoutMs: ms(config.TESSERA_KEEP_ALIVE_TIMEOUT),
    maxConnections: config.TESSERA_MAX_CONNECTIONS,
    maxConnectionsPerAddress: config.TESSERA_MAX_CONNECTIONS_PER_ADDRESS,
    ...(config.TESSERA_TRUSTED_PROXIES === undefined ? {} : { trustedProxies: config.TESSERA_TRUSTED_PROXIES }),
  };
}

/**
 * The Fastify constructor options that carry the TLS policy and the timeouts. Node's own
 * defaults are far too patient for an auth service (a 300 s request timeout, checked every
 * 30 s, and a 120 s TLS handshake), so a stalled body held a connection for minutes.
 */
export function serverOptions(
  tls: { readonly cert: string; readonly key: string } | undefined,
  transport: TransportSettings | undefined,
): { https?: HttpsServerOptions; requestTimeout?: number; keepAliveTimeout?: number; trustProxy?: string[] } {
  const timeouts = transport
    ? {
        headersTimeout: transport.headersTimeoutMs,
        requestTimeout: transport.requestTimeoutMs,
        // Node checks for expired requests on this interval: a quarter of the shortest timeout
        // (at most 1 s) keeps a request from outliving its timeout by much.
        connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.round(transport.headersTimeoutMs / 4))),
      }
    : {};
  return {
    ...(tls ? { https: { cert: tls.cert, key: tls.key, ...tlsPolicy(), ...timeouts, ...(transport ? { handshakeTimeout: transport.headersTimeoutMs } : {}) } } : {}),
    // Fastify sets these on the server after creating it, over the values above.
    ...(transport ? { requestTimeout: transport.requestTimeoutMs, keepAliveTimeout: transport.keepAliveTimeoutMs } : {}),
    // request.ip then walks X-Forwarded-For from the right past these hops (proxy-addr).
    ...(transport?.trustedProxies ? { trustProxy: [...transport.trustedProxies] } : {}),
  };
}
