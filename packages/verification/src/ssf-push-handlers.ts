import type { IncomingMessage, ServerResponse } from 'node:http';
import { tooLarge, type PushAnswer } from './ssf-push-answer.js';
import type { SsfReceiver } from './ssf-receiver.js';

/** The body, or undefined once it passes `maxBytes` (reading stops there). */
function readBounded(request: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > maxBytes) return Promise.resolve(undefined);
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length > maxBytes) {
        request.off('data', onData);
        request.pause();
        resolveBody(undefined);
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('end', () => resolveBody(Buffer.concat(chunks).toString('utf8')));
    request.once('error', reject);
  });
}

function send(response: ServerResponse, answer: PushAnswer, closeAfter: boolean): void {
  if (closeAfter) response.setHeader('connection', 'close');
  if (answer.status === 202) {
    response.writeHead(202).end();
    return;
  }
  response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
}

/** Reads one pushed request (or takes the body a framework parsed already) and answers it. */
async function handlePush(receiver: SsfReceiver, request: IncomingMessage & { body?: unknown }, response: ServerResponse): Promise<void> {
  const parsed = typeof request.body === 'string' ? request.body : Buffer.isBuffer(request.body) ? request.body.toString('utf8') : undefined;
  const body = parsed ?? (request.readableEnded ? '' : await readBounded(request, receiver.maxSetBytes));
  // Past the bound, the rest is not read: the connection is closed after the answer.
  if (body === undefined) return send(response, tooLarge(receiver.maxSetBytes), true);
  const answer = await receiver.receivePush({ authorization: request.headers.authorization, contentType: request.headers['content-type'], body });
  send(response, answer, false);
}

/**
 * RFC 8935 push endpoint for a plain `node:http` (or `node:https`) server: route the stream's
 * endpoint URL to it. Answers 202 once the SET is applied (and persisted), 400 or 401 with
 * `{"err", "description"}` otherwise, 405 for a method other than POST.
 */
export function ssfPushHandler(receiver: SsfReceiver): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    if (request.method !== 'POST') {
      response.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    handlePush(receiver, request, response).catch(() => {
      // A failure to apply or persist: a 5xx makes the transmitter retry the same SET.
      if (!response.headersSent) response.writeHead(503).end();
    });
  };
}

/** Express's `next`, typed here so Express never becomes a dependency. */
export type NextFunction = (error?: unknown) => void;

/**
 * RFC 8935 push endpoint as Express middleware: `app.post('/ssf/events', ssfPushMiddleware(receiver))`.
 * It reads the body itself (mount no body parser for `application/secevent+jwt` before it; a
 * string or Buffer body that `express.text()` or `express.raw()` made is taken as is). A failure
 * to apply or persist goes to `next(error)`: Express answers 500, and the transmitter retries.
 */
export function ssfPushMiddleware(receiver: SsfReceiver): (request: IncomingMessage & { body?: unknown }, response: ServerResponse, next: NextFunction) => void {
  return (request, response, next) => {
    if (request.method !== 'POST') {
      next();
      return;
    }
    handlePush(receiver, request, response).catch(next);
  };
}
