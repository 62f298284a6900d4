/**
 * The admin API, called by the page with its session cookie (the browser sends it: HttpOnly, the
 * script never sees it). Every change carries the session's CSRF token; the admin token itself is
 * never kept anywhere in the page after sign-in.
 */
let csrfToken: string | undefined;

export function useCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

/** An answer other than 2xx: the problem's detail, and its status. */
export class ApiRefusal extends Error {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(detail);
    this.name = 'ApiRefusal';
  }
}

/** What the page does when a request answers 401: the session is over (signed out, expired, or its admin token revoked). */
let onSignedOut: (reason: string) => void = () => undefined;
export function whenSignedOut(handler: (reason: string) => void): void {
  onSignedOut = handler;
}

/** A read answered 503 with a short Retry-After (a read model catching up) is asked again, this many times at most. */
const readRetries = 3;

export async function call<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken !== undefined) headers['x-tessera-csrf'] = csrfToken;
  const send = () => fetch(path, { method, headers, credentials: 'same-origin', cache: 'no-store', ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  let answer = await send();
  // Only reads: a change answered 503 may be tried again by the user, who sees why.
  for (let retried = 0; method === 'GET' && answer.status === 503 && retried < readRetries; retried += 1) {
    const seconds = Number(answer.headers.get('retry-after'));
    if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 5) break;
    await new Promise((resume) => setTimeout(resume, seconds * 1000));
    answer = await send();
  }
  if (answer.status === 204) return undefined as T; // No content: the caller asked for nothing back.
  const text = await answer.text();
  const parsed: unknown = text === '' ? undefined : JSON.parse(text);
  if (!answer.ok) {
    const detail = typeof parsed === 'object' && parsed !== null && 'detail' in parsed ? String(parsed.detail) : `HTTP ${answer.status}`;
    if (answer.status === 401 && !path.startsWith('/console/session')) onSignedOut(detail);
    throw new ApiRefusal(answer.status, detail);
  }
  return parsed as T; // The admin API's answer for this path, as its OpenAPI document describes it.
}

/** A query string of the values given (empty ones left out). */
export function query(values: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}
