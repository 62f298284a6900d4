import type { FastifyError, FastifyInstance } from 'fastify';
import { tooLarge } from './ssf-push-answer.js';
import type { SsfReceiver } from './ssf-receiver.js';

/** What `ssfPushRoute` takes: the receiver (made with a push delivery) and the route's path. */
export interface SsfPushRouteOptions {
  /** A receiver made with `delivery: { method: 'push', … }`. */
  readonly receiver: SsfReceiver;
  /** The route's path: the path of the stream's endpoint URL. Default `/ssf/events`. */
  readonly path?: string;
}

/**
 * RFC 8935 push endpoint for fastify: `await app.register(ssfPushRoute, { receiver, path })`. An
 * encapsulated plugin (not wrapped in fastify-plugin) so that the body parser it installs, which
 * takes every media type as a bounded string, applies to its own route only. Only fastify's types
 * are imported: the package loads without fastify installed.
 */
export async function ssfPushRoute(app: FastifyInstance, options: SsfPushRouteOptions): Promise<void> {
  const { receiver } = options;
  app.removeAllContentTypeParsers();
  // Every media type read as a string: answerPush checks it, so a wrong one gets RFC 8935's 400, not fastify's 415.
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: receiver.maxSetBytes }, (_request, body, done) => done(null, body));
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      const answer = tooLarge(receiver.maxSetBytes);
      return reply.code(400).header('connection', 'close').send('body' in answer ? answer.body : undefined);
    }
    // A failure to apply or persist: a 5xx makes the transmitter retry the same SET.
    return reply.code(503).send();
  });
  app.post(options.path ?? '/ssf/events', async (request, reply) => {
    const answer = await receiver.receivePush({
      authorization: request.headers.authorization,
      contentType: request.headers['content-type'],
      body: typeof request.body === 'string' ? request.body : '',
    });
    if (answer.status === 202) return reply.code(202).send();
    return reply.code(answer.status).send(answer.body);
  });
}
