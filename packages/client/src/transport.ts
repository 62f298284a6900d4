import {
  BadRequestError,
  ForbiddenError,
  InvalidCredentialsError,
  InvalidOptionError,
  NetworkError,
  RateLimitedError,
  redact,
  ServerError,
  TesseraError,
  type TesseraOperation,
} from './errors.js';
import { systemTime } from './system-time.js';
import { errorCode } from './private-files.js';

/** Whatever `fetch` the client is given: Node's global one by default, or an adapter. */
export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** How one client talks HTTP: its fetch, its time limit, and the secrets its messages must never contain. */
export interface Transport {
  readonly fetch: FetchLike;
  /** Time limit of a token operation, body included. */
  readonly timeoutMs: number;
  readonly secrets: () => Iterable<string | undefined>;
}

/**
 * Sends one request, turning a failure to get any answer into a NetworkError. Token
 * operations are bounded by the transport's time limit; `client.fetch` requests only by
 * the caller's own signal.
 */
export async function send(transport: Transport, operation: TesseraOperation, url: URL, init: RequestInit): Promise<Response> {
  const timeout = operation === 'fetch' ? undefined : AbortSignal.timeout(transport.timeoutMs);
  const signal = timeout && init.signal ? AbortSignal.any([init.signal, timeout]) : (timeout ?? init.signal);
  try {
    return await transport.fetch(url, signal ? { ...init, signal } : init);
  } catch (error) {
    const timedOut = timeout?.aborted ?? false;
    const reason = timedOut ? `timed out after ${transport.timeoutMs} ms` : `no answer (${describeFailure(error)})`;
    throw new NetworkError(redact(`${operation} ${url.origin}${url.pathname}: ${reason}`, transport.secrets()), { operation, cause: error, timedOut });
  }
}

/** POSTs a JSON body to a token operation and returns the parsed JSON of a 2xx answer; anything else throws. */
export async function postJson(transport: Transport, operation: TesseraOperation, url: URL, body: unknown): Promise<unknown> {
  const response = await send(transport, operation, url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  return readJson(transport, operation, response);
}

/** POSTs a form body (/v1/authenticate) and returns the parsed JSON of a 2xx answer; anything else throws. */
export async function postForm(transport: Transport, operation: TesseraOperation, url: URL, form: Record<string, string>): Promise<unknown> {
  const response = await send(transport, operation, url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'cache-control': 'no-cache', accept: 'application/json' },
    body: new URLSearchParams(form).toString(),
  });
  return readJson(transport, operation, response);
}

async function readJson(transport: Transport, operation: TesseraOperation, response: Response): Promise<unknown> {
  if (!response.ok) throw await errorFromResponse(transport, operation, response);
  try {
    return await response.json();
  } catch (error) {
    // The body holds tokens: it is never quoted, not even in part.
    throw new TesseraError('ERR_UNEXPECTED_RESPONSE', `${operation}: the ${response.status} answer is not JSON`, {
      operation,
      status: response.status,
      cause: error instanceof Error ? new Error(error.name) : undefined,
    });
  }
}

/** Maps a non-2xx answer to its typed error. The message holds status, title and detail of the problem — never the request. */
export async function errorFromResponse(transport: Transport, operation: TesseraOperation, response: Response): Promise<TesseraError> {
  const problem = await readProblem(response);
  const status = response.status;
  const summary = [problem.title, problem.detail].filter(Boolean).join(': ');
  // Redact first, then shorten: shortening first could cut a secret so that it no longer matches.
  const message = shorten(redact(`${operation} answered ${status}${summary ? ` (${summary})` : ''}`, transport.secrets()), 300);
  const details = { operation, status, problemType: problem.type === undefined ? undefined : shorten(redact(problem.type, transport.secrets()), 200) };
  const retryAfterSeconds = parseRetryAfter(response.headers.get('retry-after'));
  if (status === 401) {
    // Only get-oauth-token and authenticate take credentials; a 401 elsewhere is a refused token.
    return operation === 'get-oauth-token' || operation === 'authenticate'
      ? new InvalidCredentialsError(message, details)
      : new TesseraError('ERR_INVALID_TOKEN', message, details);
  }
  if (status === 429) return new RateLimitedError(message, { ...details, retryAfterSeconds });
  if (status === 403) return new ForbiddenError(message, details);
  if (status === 400 || status === 413 || status === 415) return new BadRequestError(message, details);
  if (status >= 500) return new ServerError(message, { ...details, retryAfterSeconds });
  return new TesseraError('ERR_UNEXPECTED_RESPONSE', message, details);
}

interface ProblemSummary {
  readonly type?: string;
  readonly title?: string;
  readonly detail?: string;
}

async function readProblem(response: Response): Promise<ProblemSummary> {
  const contentType = response.headers.get('content-type') ?? '';
  if (!/json/i.test(contentType)) {
    await response.body?.cancel().catch(() => undefined);
    return {};
  }
  try {
    const body = await response.json();
    if (typeof body !== 'object' || body === null) return {};
    const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
    return {
      type: text('type' in body ? body.type : undefined),
      title: text('title' in body ? body.title : undefined),
      detail: text('detail' in body ? body.detail : undefined),
    };
  } catch {
    return {};
  }
}

const shorten = (text: string, length: number) => (text.length <= length ? text : `${text.slice(0, length - 1)}…`);

/** Retry-After as delay-seconds or an HTTP date (RFC 9110 10.2.3). */
export function parseRetryAfter(value: string | null, now: number = systemTime()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

function describeFailure(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = errorCode(cause);
  if (code) return code;
  return error instanceof Error ? error.name : 'unknown failure';
}

/** The base address with a trailing slash, so `new URL('v5/…', base)` keeps any path prefix. */
export function baseOf(address: string, option: string): URL {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new InvalidOptionError(`${option} is not an absolute URL`);
  }
  if (url.protocol !== 'https:') throw new InvalidOptionError(`${option} must use https: the service answers over HTTPS only`);
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}
