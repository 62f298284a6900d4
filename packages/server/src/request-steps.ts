import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RequestStep } from '@tessera/http';

/** A step of the server's own work once an answer has gone (the access line, the metrics). */
export type ResponseStep = (request: FastifyRequest, reply: FastifyReply) => void;

/**
 * The server's own work on every request runs in one onRequest hook and one onResponse hook, its
 * steps in order, rather than a hook each: fastify costs every hook a turn per request. With four
 * onRequest hooks and two onResponse hooks, a protected request on a fresh server ran at
 * 0.82–0.84× a fastify route that writes an access line; with one of each, at 0.94–0.99× (three
 * alternating pairs each, docs/benchmarks.md). The services' steps (the bearer check) run in the
 * same hook, after the server's. A request step that answers returns false: the steps after it,
 * and the route, do not run (fastify's rule for a callback hook that does not call `done`). A step
 * that must wait returns a promise, and the steps after it run once it says true.
 */
export function runRequestSteps(app: FastifyInstance, onRequest: readonly RequestStep[], onResponse: readonly ResponseStep[]): void {
  /** The steps from `first` on; a step's promise holds the rest until it settles. */
  const runFrom = (first: number, request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    for (let at = first; at < onRequest.length; at += 1) {
      const step = onRequest[at];
      if (step === undefined) break;
      const goOn = step(request, reply);
      if (goOn === true) continue;
      if (goOn === false) return;
      goOn.then(
        (afterWaiting) => afterWaiting && runFrom(at + 1, request, reply, done),
        (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
      );
      return;
    }
    done();
  };
  app.addHook('onRequest', (request, reply, done) => runFrom(0, request, reply, done));
  app.addHook('onResponse', (request, reply, done) => {
    for (const step of onResponse) step(request, reply);
    done();
  });
}
