import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EventMetadata } from '@tessera/contracts';
import { clientAddress } from './peer-link.js';

export function requestMetadata(request: FastifyRequest): EventMetadata {
  // Behind an authenticated peer link, the client's own address (docs/decisions/0012).
  return { requestId: String(request.id), sourceAddress: clientAddress(request) };
}

export function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

export const isoTime = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();
