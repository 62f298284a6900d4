import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AdminScope } from '@tessera/events';
import type { CommandStore, EventStore } from '@tessera/event-store';
import type { SecretHashers } from '@tessera/tokens';
import { problemResponses } from '@tessera/http';
import { createReceiverService, listReceivers } from './receiver-service.js';
import type { LiveStream } from './stream-decider.js';
import type { StreamWorker } from './delivery/stream-worker.js';

export interface ReceiverAdminRoutesOptions {
  readonly store: CommandStore & Pick<EventStore, 'readAll'>;
  /** New receivers' tokens are hashed with the current secret-hashing key. */
  readonly hashers: SecretHashers;
  /** Epoch seconds. */
  readonly now: () => number;
  /** The admin API's guard: 401 without an admin token, 403 without the scope. */
  readonly requireScope: (scope: AdminScope) => onRequestAsyncHookHandler;
  /** The admin token of a request the guard let through, for the audit trail. */
  readonly adminTokenIdOf: (request: FastifyRequest) => string;
  /** A receiver's live streams, as stream management answers them; without it the streams route is not served. */
  readonly streamsOf?: ((receiverId: string) => readonly LiveStream[]) | undefined;
  /** A stream's delivery where this replica holds the delivery lease; undefined elsewhere (another replica delivers). */
  readonly deliveryOf?: ((receiverId: string, streamId: string) => Pick<StreamWorker, 'pending' | 'oldestPendingMs' | 'drops' | 'lastDeliveredAt'> | undefined) | undefined;
}

/** A page of a receiver's streams: a receiver has few (each is a stream management request). */
const streamPageLimit = 100;

// Refusals are answered problem+json (the error handler), so the document names that type.
const errors = problemResponses(400, 401, 403, 404, 503);
const tags = ['admin'];
const security = [{ bearer: [] }];
const iso = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();

/**
 * The receivers of the Shared Signals transmitter on the admin listener, scope ssf:receivers: what
 * `tessera ssf-receivers` does, over HTTP. The token is in the create answer once, and nowhere else.
 */
export async function receiverAdminRoutes(app: FastifyInstance, options: ReceiverAdminRoutesOptions): Promise<void> {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const onRequest = options.requireScope('ssf:receivers');
  const service = (request: FastifyRequest) =>
    createReceiverService({
      store: options.store,
      hasher: options.hashers.current(),
      now: options.now,
      actor: `admin:${options.adminTokenIdOf(request)}`,
      metadata: { requestId: String(request.id), sourceAddress: request.ip },
    });

  routes.post(
    '/admin/v1/ssf/receivers',
    {
      onRequest,
      schema: {
        summary: 'Create a Shared Signals receiver: its token is in this answer once (scope ssf:receivers)',
        tags,
        security,
        body: z.strictObject({
          name: z.string().min(1).max(200),
          accounts: z.array(z.string().min(1).max(128)).max(100).optional().describe('Scope the receiver to these accounts: it may follow only them and their families. Omitted: every account'),
        }),
        response: { 201: z.object({ receiver_id: z.string(), token: z.string(), accounts: z.array(z.string()).optional() }), ...errors },
      },
    },
    async (request, reply) => {
      const created = await service(request).create({ name: request.body.name, accounts: request.body.accounts });
      return noStore(reply).code(201).send({ receiver_id: created.receiverId, token: created.token, ...(created.accounts === undefined ? {} : { accounts: [...created.accounts] }) });
    },
  );

  routes.get(
    '/admin/v1/ssf/receivers',
    {
      onRequest,
      schema: {
        summary: 'Every Shared Signals receiver, never its token (scope ssf:receivers)',
        tags,
        security,
        response: { 200: z.object({ receivers: z.array(z.object({ receiver_id: z.string(), name: z.string(), accounts: z.array(z.string()).optional().describe('Absent: every account'), created: z.string(), revoked: z.string().nullable() })) }), ...errors },
      },
    },
    async (_request, reply) => {
      const receivers = (await listReceivers(options.store)).map((receiver) => ({
        receiver_id: receiver.receiverId,
        name: receiver.name,
        ...(receiver.accounts === undefined ? {} : { accounts: [...receiver.accounts] }),
        created: iso(receiver.createdAt),
        revoked: receiver.revokedAt === undefined ? null : iso(receiver.revokedAt),
      }));
      return noStore(reply).send({ receivers });
    },
  );

  const { streamsOf, deliveryOf } = options;
  if (streamsOf) {
    routes.get(
      '/admin/v1/ssf/receivers/:receiver_id/streams',
      {
        onRequest,
        schema: {
          summary: "A receiver's streams and their delivery: status, pending SETs, last delivery and drops since the delivering replica started (scope ssf:receivers)",
          tags,
          security,
          params: z.strictObject({ receiver_id: z.string().min(1).max(128) }),
          response: {
            200: z.object({
              receiver_id: z.string(),
              streams: z.array(
                z.object({
                  stream_id: z.string(),
                  status: z.enum(['enabled', 'paused', 'disabled']),
                  reason: z.string().nullable(),
                  delivery_method: z.enum(['push', 'poll']),
                  endpoint_url: z.string().nullable().describe('push only'),
                  delivered_here: z.boolean().describe('false: another replica holds the delivery lease, and the counts below are its own (ask it)'),
                  pending_sets: z.number().int().nonnegative().nullable(),
                  oldest_pending_seconds: z.number().nonnegative().nullable(),
                  last_delivery: z.string().nullable().describe('The last SET the receiver acknowledged, since the delivering process started'),
                  dropped_sets: z.number().int().nonnegative().nullable(),
                  last_drop: z.object({ jti: z.string(), err: z.string(), at: z.string() }).nullable(),
                }),
              ),
            }),
            ...errors,
          },
        },
      },
      async (request, reply) => {
        const receiverId = request.params.receiver_id;
        const streams = streamsOf(receiverId)
          .slice(0, streamPageLimit)
          .map((stream) => {
            const delivery = deliveryOf?.(receiverId, stream.streamId);
            const method = stream.configuration.delivery;
            const last = delivery?.drops.last;
            return {
              stream_id: stream.streamId,
              status: stream.streamStatus,
              reason: stream.reason ?? null,
              delivery_method: method.method,
              endpoint_url: method.method === 'push' ? method.endpointUrl : null,
              delivered_here: delivery !== undefined,
              pending_sets: delivery?.pending ?? null,
              oldest_pending_seconds: delivery === undefined ? null : delivery.oldestPendingMs() / 1000,
              last_delivery: delivery?.lastDeliveredAt === undefined ? null : iso(delivery.lastDeliveredAt),
              dropped_sets: delivery?.drops.count ?? null,
              last_drop: last === undefined ? null : { jti: last.jti, err: last.err, at: iso(last.at) },
            };
          });
        return noStore(reply).send({ receiver_id: receiverId, streams });
      },
    );
  }

  // Takes no body, as the operator revocation routes: a bare `curl -X POST` is fine.
  await app.register(async (revoking) => {
    revoking.removeAllContentTypeParsers();
    revoking.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, undefined));
    revoking.withTypeProvider<ZodTypeProvider>().post(
      '/admin/v1/ssf/receivers/:receiver_id/revoke',
      {
        onRequest,
        schema: {
          summary: "Revoke a Shared Signals receiver: its token is refused and its streams deliver nothing more (scope ssf:receivers)",
          tags,
          security,
          params: z.strictObject({ receiver_id: z.string().min(1).max(128) }),
          response: { 200: z.object({ receiver_id: z.string(), revoked: z.string(), already_revoked: z.boolean() }), ...errors },
        },
      },
      async (request, reply) => {
        const revoked = await service(request).revoke(request.params.receiver_id);
        return noStore(reply).send({ receiver_id: revoked.receiverId, revoked: iso(revoked.revokedAt), already_revoked: revoked.alreadyRevoked });
      },
    );
  });
}

function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store');
}
