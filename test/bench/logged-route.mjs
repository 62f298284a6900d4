// The route the protected request is judged against: a fastify POST route with no auth and no
// schema, answering a body shaped like Tessera's charge acknowledgement, and (given a file) one
// pino access line per request, as Tessera writes for each token operation: the same fields,
// from an onResponse hook, through pino's default (synchronous) destination on that file.
// Plain JavaScript, so the same route can also be loaded into Tessera's own process
// (logged-route-in-process.mjs), which runs compiled code with plain node.
import pino from 'pino';

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {string | undefined} accessLogFile
 */
export function addChargeRoute(app, accessLogFile) {
  if (accessLogFile) {
    const accessLog = pino({ level: 'info' }, pino.destination({ dest: accessLogFile, sync: true }));
    app.addHook('onResponse', (request, reply, done) => {
      accessLog.info(
        {
          reqId: request.id,
          req: { method: request.method, url: request.url.split('?')[0], id: request.id, remoteAddress: request.ip },
          res: { statusCode: reply.statusCode },
          responseTime: reply.elapsedTime,
        },
        'request completed',
      );
      done();
    });
  }
  // A plain handler, as Tessera's charge route has: the two routes differ in what the target
  // weighs (authentication and the server's own steps), not in how the answer leaves the handler.
  app.post('/v5/Transaction/charge', () => ({
    accepted: true,
    account_id: 'acc_bench',
    note: 'example route: nothing was charged',
  }));
}
