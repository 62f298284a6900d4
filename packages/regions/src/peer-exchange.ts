import { peerHeaders } from '@tessera/issuer';
import type { FastifyBaseLogger } from 'fastify';
import { traceContextHeaders } from '@tessera/tracing';
import type { PeerHealth } from './peer-health.js';

/** The home issuer's headers that belong to the answer the client sees; the rest are hop-by-hop or the peer's own (a DPoP-Nonce among them). */
export const relayedHeaders = ['content-type', 'cache-control', 'pragma', 'retry-after', 'www-authenticate'] as const;

/** A home region that does not answer is a short outage for its families, not the client's fault. */
export const homeUnavailableRetryAfterSeconds = 5;

export type Exchange = { readonly kind: 'answered'; readonly answer: Response; readonly body: string } | { readonly kind: 'failed'; readonly cause: string; readonly timedOut: boolean };

export interface PeerRequest {
  /** The home issuer's origin and the route asked there: the same route the client asked here. */
  readonly url: URL;
  readonly secret: string;
  /** The client's own address, as this issuer's socket (or trusted proxy) saw it. */
  readonly clientAddress: string;
  /** Further peer headers: what this issuer vouches for on the client's behalf. */
  readonly vouched?: Readonly<Record<string, string>>;
  readonly contentType: string;
  readonly accept: string;
  readonly body: string;
  readonly budgetSeconds: number;
}

/**
 * One request over the peer link (docs/decisions/0012), with its whole answer read within the
 * budget. Never throws: a refused connection, a TLS failure, a timeout or a redirect is a failure
 * whose cause is for the operator, and never holds the secret.
 */
export async function exchangeWithHome(peer: PeerRequest): Promise<Exchange> {
  const signal = AbortSignal.timeout(peer.budgetSeconds * 1000);
  try {
    const answer = await fetch(peer.url, {
      method: 'POST',
      headers: {
        // The home issuer's spans join this request's trace.
        ...traceContextHeaders(),
        ...peer.vouched,
        'content-type': peer.contentType,
        accept: peer.accept,
        [peerHeaders.secret]: peer.secret,
        [peerHeaders.forwardedFor]: peer.clientAddress,
      },
      body: peer.body,
      signal,
      // A redirect would carry the peer secret and the token to another origin: a home issuer
      // never answers with one, so it is a failure like a refused connection (503).
      redirect: 'error',
    });
    return { kind: 'answered', answer, body: await answer.text() };
  } catch (error) {
    const cause = error instanceof Error ? `${error.name}: ${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ''}` : String(error);
    return { kind: 'failed', cause, timedOut: signal.aborted };
  }
}

/** What a forwarded request's caller does next: relay home's answer, or do without it. */
export type HomeVerdict =
  | { readonly kind: 'relay'; readonly answer: Response; readonly body: string }
  /** Home is out of reach: a revoke is recorded here, anything else is a 503. */
  | { readonly kind: 'unreachable' }
  /** Home answered a revoke with a 5xx (its store is out, say): the revoke is recorded here rather than left waiting. */
  | { readonly kind: 'undecided' };

/**
 * The one reading of an exchange with the home region, for every forwarded route: the link's
 * health, the operator's log line, and whether a revoke goes on here.
 */
export function homeVerdict(exchange: Exchange, context: { readonly log: FastifyBaseLogger; readonly region: string; readonly health?: PeerHealth | undefined; readonly revoking: boolean }): HomeVerdict {
  const { log, region, health, revoking } = context;
  if (exchange.kind === 'failed') {
    log.warn({ region, cause: exchange.cause }, 'home region unreachable for a forwarded request');
    health?.failed(region, exchange.cause, { wholeBudget: exchange.timedOut });
    return { kind: 'unreachable' };
  }
  health?.succeeded(region);
  const { answer, body } = exchange;
  if (revoking && answer.status >= 500) {
    log.warn({ region, status: answer.status }, 'home region could not decide a forwarded revoke');
    return { kind: 'undecided' };
  }
  log.info({ region, status: answer.status }, 'forwarded to the home region');
  return { kind: 'relay', answer, body };
}
