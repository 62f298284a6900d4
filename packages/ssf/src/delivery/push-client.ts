import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { z } from 'zod';
import type { EgressPolicy } from '@tessera/egress';

/** What a push may reach: the process's egress policy (TESSERA_EGRESS_ALLOW), and whether plain http is allowed for every host. */
export interface PushEgress {
  readonly policy: Pick<EgressPolicy, 'lookup' | 'refusalOf' | 'allowsPlainHttp'>;
  /** TESSERA_SSF_ALLOW_HTTP_PUSH=true: plain http to any host the policy lets a socket reach (development). */
  readonly allowHttp: boolean;
}

/** What became of one push (RFC 8935 section 2.3). */
export type PushOutcome =
  | { readonly kind: 'delivered'; readonly status: number }
  /** The receiver refused this SET for what it is: sending the same SET again cannot help. */
  | { readonly kind: 'refused'; readonly status: number; readonly err: string }
  /** Worth another try: a timeout, a connection error, a 5xx, a 429, or a refusal that names a configuration or key problem. */
  | { readonly kind: 'failed'; readonly reason: string };

/**
 * RFC 8935's error codes, and whether a SET refused with one is dropped or tried again:
 * invalid_request says this SET is malformed (the same bytes would be refused again); every other
 * code is about keys, issuer, audience or credentials, which change without this SET changing
 * (a receiver that has not fetched the rotated key yet; an authorization header being fixed), so
 * the SET is retried, and a stream refused long enough is paused instead of losing SETs.
 */
export const droppedErrorCodes: ReadonlySet<string> = new Set(['invalid_request']);

/** The most of a receiver's answer read: RFC 8935's error body is a few dozen bytes. */
export const responseBodyLimit = 4_096;

/**
 * One stream's connection to its receiver: its own agent (keep-alive, one socket), so a slow or
 * dead receiver holds no other stream's sockets, and a deadline per request.
 */
export class PushClient {
  /** Made at the first push that needs it: a polled stream, or one not pushed to yet, holds no agent (memory per idle stream). */
  private httpsAgent: HttpsAgent | undefined;
  private httpAgent: HttpAgent | undefined;

  constructor(
    private readonly timeoutMs: number,
    private readonly egress: PushEgress,
  ) {}

  // Every connection's address comes from the policy's lookup, which refuses loopback, private,
  // link-local and metadata addresses unless allowed: a kept-alive socket is one it admitted.
  private get https(): HttpsAgent {
    return (this.httpsAgent ??= new HttpsAgent({ keepAlive: true, maxSockets: 1, lookup: this.egress.policy.lookup }));
  }

  private get http(): HttpAgent {
    return (this.httpAgent ??= new HttpAgent({ keepAlive: true, maxSockets: 1, lookup: this.egress.policy.lookup }));
  }

  push(endpointUrl: string, set: string, authorization: string | undefined, signal?: AbortSignal): Promise<PushOutcome> {
    const url = new URL(endpointUrl);
    const secure = url.protocol === 'https:';
    // Refused before any byte leaves: whatever listens (or not) at a refused address, the receiver
    // sees the same failure, so delivery tells nothing about the network behind Tessera.
    const refusal = this.refusalOf(url);
    if (refusal !== undefined) return Promise.resolve({ kind: 'failed', reason: refusal });
    const body = Buffer.from(set, 'utf8');
    return new Promise((resolve) => {
      let settled = false;
      const settle = (outcome: PushOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const headers: Record<string, string> = { 'content-type': 'application/secevent+jwt', accept: 'application/json', 'content-length': String(body.length) };
      if (authorization !== undefined) headers.authorization = authorization;
      const outgoing = (secure ? httpsRequest : httpRequest)(url, { method: 'POST', headers, agent: secure ? this.https : this.http }, (incoming) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const answer = () => outcomeOf(incoming.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'));
        incoming.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          // An answer is a status and, on a refusal, a short JSON object: a receiver that sends
          // more is cut off at the bound, so it costs neither bandwidth nor the push's deadline.
          if (size > responseBodyLimit) {
            settle(answer());
            outgoing.destroy();
          }
        });
        incoming.on('end', () => settle(answer()));
        incoming.on('error', (error) => settle({ kind: 'failed', reason: error.message }));
      });
      const timer = setTimeout(() => {
        outgoing.destroy(new Error(`no answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      const onAbort = () => outgoing.destroy(new Error('stopped'));
      signal?.addEventListener('abort', onAbort, { once: true });
      outgoing.on('error', (error) => settle({ kind: 'failed', reason: error.message }));
      outgoing.end(body);
    });
  }

  close(): void {
    this.httpsAgent?.destroy();
    this.httpAgent?.destroy();
  }

  /** Why the egress policy refuses this endpoint before a connection (plain http, or an address in the URL), or undefined. */
  private refusalOf(url: URL): string | undefined {
    if (url.protocol === 'http:' && !this.egress.allowHttp && !this.egress.policy.allowsPlainHttp(url)) return 'refused by the egress policy: plain http';
    // An address in the URL is connected to without a lookup: checked here instead.
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) !== 0) {
      const range = this.egress.policy.refusalOf(host);
      if (range !== undefined) return `refused by the egress policy (${range})`;
    }
    return undefined;
  }
}

function outcomeOf(status: number, text: string): PushOutcome {
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status === 400) {
    const err = errOf(text);
    if (err !== undefined && droppedErrorCodes.has(err)) return { kind: 'refused', status, err };
    return { kind: 'failed', reason: `HTTP 400${err === undefined ? '' : ` ${err}`}` };
  }
  return { kind: 'failed', reason: `HTTP ${status}` };
}

/** A refusal's body (RFC 8935 section 2.3), with a code short and plain enough to log as it is. */
const PushErrorBody = z.object({ err: z.string().regex(/^[a-z_]{1,64}$/) });

function errOf(text: string): string | undefined {
  try {
    const parsed = PushErrorBody.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.err : undefined;
  } catch {
    return undefined;
  }
}
