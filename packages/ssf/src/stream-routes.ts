import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { problemResponses, sendProblem, unauthorized } from '@tessera/http';
import type { Transmitter } from './delivery/transmitter.js';
import type { DeliveryForwarding } from './delivery-forwarder.js';
import type { Drops } from './delivery/stream-worker.js';
import { deliveryMethods } from './event-types.js';
import type { AuthenticatedReceiver, ReceiverDirectory } from './receiver-directory.js';
import { SsfEmptyPollTooSoon, SsfPollInFlight, SsfStreamNotFound, SsfVerificationTooSoon } from './ssf-errors.js';
import type { RequestAudit, StreamManagement } from './stream-management.js';
import {
  CreateStreamRequest,
  OptionalStreamIdQuery,
  PollRequest,
  PollResponse,
  ReplaceStreamRequest,
  StreamConfiguration,
  StreamIdQuery,
  StreamStatus,
  StreamStatusRequest,
  TransmitterMetadata,
  UpdateStreamRequest,
  VerificationRequest,
  addSubjectRequest,
  removeSubjectRequest,
} from './stream-wire.js';

/** The transmitter's paths on the public listener; the metadata names each as an absolute URL. */
export const ssfPaths = {
  metadata: '/.well-known/ssf-configuration',
  streams: '/ssf/streams',
  status: '/ssf/status',
  addSubject: '/ssf/subjects/add',
  removeSubject: '/ssf/subjects/remove',
  verification: '/ssf/verify',
  poll: '/ssf/poll',
} as const;

export interface StreamRoutesOptions {
  /** The transmitter's issuer, read when a request needs it: its default follows the port the listener bound. */
  readonly issuer: () => string;
  /** The issuer when it is known as the routes are made (TESSERA_PUBLIC_URL, or a fixed port): the subject schemas name it. */
  readonly issuerAtStart?: string | undefined;
  readonly receivers: Pick<ReceiverDirectory, 'authenticate'>;
  readonly management: StreamManagement;
  readonly transmitter: Pick<Transmitter, 'workerOf'>;
  /** With several replicas: polls and status reads are answered by the delivery lease's holder, forwarded there by the others. */
  readonly forwarding?: DeliveryForwarding;
  /** TESSERA_SSF_POLL_WAIT, ms: the longest a long poll waits. */
  readonly pollWaitMs: number;
}

/** SSF 1.0 section 7.1: what a receiver reads first. */
export function transmitterMetadata(issuer: string) {
  return {
    spec_version: '1_0',
    issuer,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    delivery_methods_supported: [deliveryMethods.push, deliveryMethods.poll],
    configuration_endpoint: `${issuer}${ssfPaths.streams}`,
    status_endpoint: `${issuer}${ssfPaths.status}`,
    add_subject_endpoint: `${issuer}${ssfPaths.addSubject}`,
    remove_subject_endpoint: `${issuer}${ssfPaths.removeSubject}`,
    verification_endpoint: `${issuer}${ssfPaths.verification}`,
    authorization_schemes: [{ spec_urn: 'urn:ietf:rfc:6750' }],
    default_subjects: 'NONE' as const,
  };
}

const receiverOf = new WeakMap<FastifyRequest, AuthenticatedReceiver>();
const bearer = /^bearer +([^\s]+) *$/i;
const security = [{ bearer: [] }];
const tags = ['shared signals'];
const noContent = { 204: z.null().describe('Done; no body') };

/**
 * Stream management (SSF 1.0 section 8) and polling (RFC 8936) on the public listener, for
 * receivers with a receiver token (`tessera ssf-receivers create`), plus the transmitter's
 * metadata for anyone. A receiver sees and manages only its own streams: another's is a 404.
 */
export async function streamRoutes(app: FastifyInstance, options: StreamRoutesOptions): Promise<void> {
  const { management, transmitter, forwarding } = options;
  /** How long a forwarded status read may take; a forwarded poll, its wait more. */
  const forwardTimeoutMs = 5_000;
  /** The forwarding when another replica answers: the holder of the delivery lease, whose memory holds the pending SETs and the drops. */
  const elsewhere = () => (forwarding !== undefined && !forwarding.servesHere() ? forwarding : undefined);

  app.withTypeProvider<ZodTypeProvider>().get(
    ssfPaths.metadata,
    { schema: { summary: 'The Shared Signals transmitter metadata (SSF 1.0 section 7.1)', tags, response: { 200: TransmitterMetadata, ...problemResponses(503) } } },
    async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send(transmitterMetadata(options.issuer())),
  );

  await app.register(async (scoped) => {
    scoped.addHook('onRequest', async (request, reply) => {
      const header = request.headers.authorization;
      const presented = header === undefined ? undefined : bearer.exec(header)?.[1];
      const receiver = presented === undefined ? undefined : options.receivers.authenticate(presented);
      if (!receiver) {
        reply.header('www-authenticate', presented === undefined ? 'Bearer' : 'Bearer error="invalid_token"');
        return sendProblem(reply, unauthorized(presented === undefined ? 'a receiver token is required: Authorization: Bearer <token>' : 'the receiver token is unknown or revoked'));
      }
      receiverOf.set(request, receiver);
      return undefined;
    });
    const routes = scoped.withTypeProvider<ZodTypeProvider>();
    const errors = { ...problemResponses(400, 401, 413, 415, 503), ...problemResponses(404), ...problemResponses(409) };
    const who = (request: FastifyRequest) => receiverOf.get(request)!.receiverId;

    routes.post(
      ssfPaths.streams,
      { schema: { summary: 'Create a stream (SSF 1.0 section 8.1.1.1)', tags, security, body: CreateStreamRequest, response: { 201: StreamConfiguration, ...problemResponses(400, 401, 413, 415, 503), ...problemResponses(409) } } },
      async (request, reply) => noStore(reply).code(201).send(await management.create(who(request), request.body, auditOf(request))),
    );
    routes.get(
      ssfPaths.streams,
      {
        schema: {
          summary: "Read a stream's configuration, or with no stream_id every stream of this receiver (SSF 1.0 section 8.1.1.2)",
          tags,
          security,
          querystring: OptionalStreamIdQuery,
          response: { 200: StreamConfiguration.or(StreamConfiguration.array()), ...problemResponses(400, 401, 503), ...problemResponses(404) },
        },
      },
      async (request, reply) => {
        const streamId = request.query.stream_id;
        return noStore(reply).send(streamId === undefined ? management.list(who(request)) : management.read(who(request), streamId));
      },
    );
    routes.patch(
      ssfPaths.streams,
      { schema: { summary: "Update a stream's configuration: the fields given (SSF 1.0 section 8.1.1.3)", tags, security, body: UpdateStreamRequest, response: { 200: StreamConfiguration, ...errors } } },
      async (request, reply) => noStore(reply).send(await management.update(who(request), request.body, auditOf(request))),
    );
    routes.put(
      ssfPaths.streams,
      { schema: { summary: "Replace a stream's configuration (SSF 1.0 section 8.1.1.4)", tags, security, body: ReplaceStreamRequest, response: { 200: StreamConfiguration, ...errors } } },
      async (request, reply) => noStore(reply).send(await management.replace(who(request), request.body, auditOf(request))),
    );
    routes.delete(
      ssfPaths.streams,
      { schema: { summary: 'Delete a stream (SSF 1.0 section 8.1.1.5)', tags, security, querystring: StreamIdQuery, response: { ...noContent, ...problemResponses(400, 401, 503), ...problemResponses(404) } } },
      async (request, reply) => {
        await management.delete(who(request), request.query.stream_id, auditOf(request));
        return noStore(reply).code(204).send();
      },
    );
    routes.get(
      ssfPaths.status,
      { schema: { summary: "A stream's status: enabled, paused or disabled, and why (SSF 1.0 section 8.1.2.1)", tags, security, querystring: StreamIdQuery, response: { 200: StreamStatus, ...problemResponses(400, 401, 503), ...problemResponses(404) } } },
      async (request, reply) => {
        // Answered here when it is no stream of this receiver's (404): the directory is every replica's.
        const status = management.status(who(request), request.query.stream_id);
        const holder = elsewhere();
        if (holder) return holder.forward(request, reply, forwardTimeoutMs);
        return noStore(reply).send(withDrops(status, transmitter.workerOf(who(request), request.query.stream_id)?.drops));
      },
    );
    routes.post(
      ssfPaths.status,
      { schema: { summary: "Set a stream's status (SSF 1.0 section 8.1.2.2)", tags, security, body: StreamStatusRequest, response: { 200: StreamStatus, ...errors } } },
      async (request, reply) => {
        management.read(who(request), request.body.stream_id);
        const holder = elsewhere();
        if (holder) return holder.forward(request, reply, forwardTimeoutMs);
        return noStore(reply).send(withDrops(await management.setStatus(who(request), request.body, auditOf(request)), transmitter.workerOf(who(request), request.body.stream_id)?.drops));
      },
    );
    routes.post(
      ssfPaths.addSubject,
      {
        schema: {
          summary: 'Add a subject: iss_sub with this issuer and an account id, or opaque with a token family id (SSF 1.0 section 8.1.3.2)',
          tags,
          security,
          body: addSubjectRequest(options.issuerAtStart),
          // 403: a receiver scoped to accounts names a subject outside them.
          response: { 200: z.object({}).describe('Added (or already there)'), ...errors, ...problemResponses(403) },
        },
      },
      async (request, reply) => {
        await management.addSubject(who(request), request.body, auditOf(request));
        return noStore(reply).code(200).send({});
      },
    );
    routes.post(
      ssfPaths.removeSubject,
      { schema: { summary: 'Remove a subject (SSF 1.0 section 8.1.3.3)', tags, security, body: removeSubjectRequest(options.issuerAtStart), response: { ...noContent, ...errors } } },
      async (request, reply) => {
        await management.removeSubject(who(request), request.body, auditOf(request));
        return noStore(reply).code(204).send();
      },
    );
    routes.post(
      ssfPaths.verification,
      { schema: { summary: "Ask for a verification event carrying the receiver's state (SSF 1.0 section 8.1.4.2)", tags, security, body: VerificationRequest, response: { ...noContent, ...errors, ...problemResponses(429) } } },
      async (request, reply) => {
        await tellingWhenToRetry(reply, () => management.verify(who(request), request.body, auditOf(request)));
        return noStore(reply).code(204).send();
      },
    );
    /** The streams with a poll being answered in this process. */
    const polling = new Set<string>();
    routes.post(
      ssfPaths.poll,
      {
        schema: {
          summary: "Poll a stream's SETs, acknowledging those received (RFC 8936); unacknowledged SETs are answered again",
          description:
            'An answered SET not acknowledged is answered again after TESSERA_SSF_ACK_DEADLINE. 429 with Retry-After: another poll of the stream is being answered, ' +
            'or this poll returns at once (returnImmediately), acknowledges nothing and has nothing to answer, sooner than TESSERA_SSF_EMPTY_POLL_INTERVAL after the ' +
            "stream's last such empty answer. A poll with SETs to answer is never refused; a long poll waits instead.",
          tags,
          security,
          querystring: StreamIdQuery,
          body: PollRequest,
          response: { 200: PollResponse, ...errors, ...problemResponses(429) },
        },
      },
      async (request, reply) => {
        // What every replica can tell from the request and its directory is answered here; only
        // the pending SETs are the holder's.
        const streamId = request.query.stream_id;
        // A body that names another stream than the URL names no stream this poll can answer: the
        // same 404 as a stream that is not the receiver's (each request alone is well formed).
        if (request.body.stream_id !== undefined && request.body.stream_id !== streamId) throw new SsfStreamNotFound();
        const stream = management.read(who(request), streamId);
        if (stream.delivery.method !== deliveryMethods.poll) throw new SsfStreamNotFound();
        const holder = elsewhere();
        if (holder) return holder.forward(request, reply, options.pollWaitMs + forwardTimeoutMs);
        // One poll of a stream at a time: concurrent polls would each answer (and serialize) the
        // same pending SETs on the request thread, for nothing the first does not give.
        if (polling.has(streamId)) throw new SsfPollInFlight();
        polling.add(streamId);
        try {
          // A stream just made is in the directory a moment before delivery has read it from the log.
          let worker = transmitter.workerOf(who(request), streamId);
          for (let waited = 0; !worker && waited < 5_000; waited += 20) {
            await new Promise((resolve) => setTimeout(resolve, 20));
            worker = transmitter.workerOf(who(request), streamId);
          }
          if (!worker) throw new SsfStreamNotFound();
          const { maxEvents = 100, returnImmediately = false, ack = [], setErrs = {} } = request.body;
          // A client that goes away ends its long poll at once.
          const gone = new AbortController();
          reply.raw.once('close', () => gone.abort());
          const answer = await tellingWhenToRetry(reply, () => worker.poll({ maxEvents, ack, setErrs, waitMs: returnImmediately ? 0 : options.pollWaitMs }, gone.signal));
          return noStore(reply).send(answer);
        } finally {
          polling.delete(streamId);
        }
      },
    );
  });
}

/**
 * Runs `step`; a stream's minimum interval refusing it (a verification, an empty poll) is answered
 * 429 by the error table, with Retry-After set here to what is left of that stream's interval.
 */
async function tellingWhenToRetry<T>(reply: FastifyReply, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof SsfVerificationTooSoon || error instanceof SsfEmptyPollTooSoon) reply.header('retry-after', String(error.retryAfterSeconds));
    throw error;
  }
}

/** A stream's status with what it dropped since this process started, when it has dropped anything. */
function withDrops<T extends object>(status: T, drops: Drops | undefined): T & { tessera_dropped_sets?: number; tessera_last_drop?: Drops['last'] } {
  if (drops === undefined || drops.count === 0) return status;
  return { ...status, tessera_dropped_sets: drops.count, ...(drops.last ? { tessera_last_drop: drops.last } : {}) };
}

function auditOf(request: FastifyRequest): RequestAudit {
  return { requestId: String(request.id), sourceAddress: request.ip };
}

function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store');
}
