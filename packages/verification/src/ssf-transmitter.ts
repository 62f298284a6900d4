import { CodedError } from '@tessera/contracts';
import type { SetErrorCode } from './ssf-set-verification.js';

/** The transmitter's metadata (SSF 1.0 section 7.1), the members read. */
export interface TransmitterConfiguration {
  readonly issuer: string;
  readonly jwks_uri: string;
  readonly configuration_endpoint: string;
  readonly add_subject_endpoint: string;
  readonly verification_endpoint: string;
}

/** A stream as the transmitter answers it, the members read. */
export interface StreamConfiguration {
  readonly stream_id: string;
  readonly aud: string | readonly string[];
  readonly delivery: { readonly method: string; readonly endpoint_url?: string };
  readonly events_delivered?: readonly string[];
}

export interface PollAnswer {
  readonly sets: Readonly<Record<string, string>>;
  readonly moreAvailable: boolean;
}

export type Subject = { readonly format: 'iss_sub'; readonly iss: string; readonly sub: string } | { readonly format: 'opaque'; readonly id: string };

/** A request the transmitter refused, or answered with what a receiver cannot follow: the status, and the problem's detail when it gave one. Never carries the receiver token. */
export class TransmitterRefused extends CodedError {
  readonly code = 'ERR_FEED_UNAVAILABLE';
  constructor(
    /** The HTTP status the transmitter answered (200 for an answer a receiver cannot follow). */
    readonly status: number,
    message: string,
    /** How long the transmitter asked to wait before asking again (its Retry-After, ms), when it said. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** Most of a Retry-After taken: a transmitter asking for longer is asked again after this, so revocations are never held back for long. */
const longestRetryAfterMs = 300_000;

/** RFC 9110 section 10.2.3: whole seconds, or an HTTP date; undefined when absent or neither. */
export function retryAfterMsOf(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : Number.isNaN(Date.parse(text)) ? undefined : Math.max(0, Date.parse(text) - now);
  return ms === undefined ? undefined : Math.min(ms, longestRetryAfterMs);
}

/**
 * The calls a receiver makes to Tessera's transmitter, each with the receiver token as a bearer
 * token: the metadata, stream management, verification and RFC 8936 polls.
 */
export class TransmitterClient {
  constructor(
    private readonly transmitterUrl: string,
    private readonly receiverToken: string,
    private readonly fetchFn: typeof fetch,
  ) {}

  configuration(): Promise<TransmitterConfiguration> {
    return this.call<TransmitterConfiguration>('GET', new URL('/.well-known/ssf-configuration', this.transmitterUrl).href, undefined, { authenticated: false });
  }

  createStream(endpoint: string, body: unknown): Promise<StreamConfiguration> {
    return this.call<StreamConfiguration>('POST', endpoint, body);
  }

  readStream(endpoint: string, streamId: string): Promise<StreamConfiguration> {
    const url = new URL(endpoint);
    url.searchParams.set('stream_id', streamId);
    return this.call<StreamConfiguration>('GET', url.href);
  }

  async addSubject(endpoint: string, streamId: string, subject: Subject): Promise<void> {
    await this.call('POST', endpoint, { stream_id: streamId, subject });
  }

  async requestVerification(endpoint: string, streamId: string, state: string): Promise<void> {
    await this.call('POST', endpoint, { stream_id: streamId, state });
  }

  poll(
    pollUrl: string,
    request: { readonly maxEvents: number; readonly returnImmediately: boolean; readonly ack: readonly string[]; readonly setErrs: Readonly<Record<string, { err: SetErrorCode; description: string }>> },
    signal: AbortSignal,
  ): Promise<PollAnswer> {
    // The transmitter holds a poll for up to TESSERA_SSF_POLL_WAIT seconds (300 at most): a poll unanswered past that is a dead connection.
    return this.call<PollAnswer>('POST', pollUrl, request, { signal: AbortSignal.any([signal, AbortSignal.timeout(330_000)]) });
  }

  private async call<T>(method: string, url: string, body?: unknown, options: { authenticated?: boolean; signal?: AbortSignal } = {}): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (options.authenticated !== false) headers.authorization = `Bearer ${this.receiverToken}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const answer = await this.fetchFn(url, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: options.signal ?? AbortSignal.timeout(10_000),
    });
    const text = await answer.text();
    if (!answer.ok) throw new TransmitterRefused(answer.status, `${method} ${new URL(url).pathname}: HTTP ${answer.status} ${problemDetail(text)}`.trimEnd(), retryAfterMsOf(answer.headers.get('retry-after')));
    // The transmitter's JSON answers, read by the members named in the types above; an empty answer (204) is not read.
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }
}

function problemDetail(text: string): string {
  try {
    // Cast: any JSON; both members are checked to be strings before use.
    const problem = JSON.parse(text) as { detail?: unknown; title?: unknown };
    const detail = typeof problem.detail === 'string' ? problem.detail : typeof problem.title === 'string' ? problem.title : '';
    return detail.slice(0, 300);
  } catch {
    return '';
  }
}
