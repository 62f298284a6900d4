import { createHash, timingSafeEqual } from 'node:crypto';
import type { SetErrorCode, SetOutcome } from './ssf-set-verification.js';

/** What a pushed SET is answered (RFC 8935 section 2.2 and 2.3): 202 once applied and persisted, else 400 (or 401) with a code. */
export type PushAnswer = { readonly status: 202 } | { readonly status: 400 | 401; readonly body: { readonly err: SetErrorCode; readonly description: string } };

export interface PushedRequest {
  readonly authorization: string | undefined;
  readonly contentType: string | undefined;
  readonly body: string;
}

export type PushDelivery = { readonly method: 'poll' } | { readonly method: 'push'; readonly authorizationHeader: string };

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** Equal, in a time that does not tell how much of a guess was right (both sides hashed to one length first). */
function sameSecret(presented: string | undefined, expected: string): boolean {
  return timingSafeEqual(digest(presented ?? ''), digest(expected)) && presented !== undefined;
}

/**
 * One pushed SET, whatever server took it: the `Authorization` header the stream was made with,
 * the `application/secevent+jwt` body no larger than `maxSetBytes`, then verification, the
 * projection and the state file. `invalid_request` makes Tessera drop the SET (the same bytes
 * would be refused again); the other codes make it retry.
 */
export async function answerPush(pushed: PushedRequest, delivery: PushDelivery, maxSetBytes: number, handleSet: (token: string) => Promise<SetOutcome>): Promise<PushAnswer> {
  if (delivery.method !== 'push') return { status: 400, body: { err: 'access_denied', description: 'this receiver polls; it takes no pushed SETs' } };
  if (!sameSecret(pushed.authorization, delivery.authorizationHeader)) return { status: 401, body: { err: 'authentication_failed', description: 'the Authorization header is not the one this stream was made with' } };
  const mediaType = pushed.contentType?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/secevent+jwt') return { status: 400, body: { err: 'invalid_request', description: 'the body must be application/secevent+jwt' } };
  if (Buffer.byteLength(pushed.body, 'utf8') > maxSetBytes) return tooLarge(maxSetBytes);
  const outcome = await handleSet(pushed.body.trim());
  if (outcome.applied) return { status: 202 };
  return { status: 400, body: { err: outcome.err, description: outcome.description } };
}

export function tooLarge(maxSetBytes: number): PushAnswer {
  return { status: 400, body: { err: 'invalid_request', description: `the SET is larger than ${maxSetBytes} bytes` } };
}
