import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { problemResponses } from '@tessera/http';
import type { PublicKeySet } from '@tessera/tokens';
import type { AdminGuard } from './admin-auth.js';

export interface SigningKeyRoutesOptions {
  readonly guard: AdminGuard;
  /** The issuer's public keys, as the JWKS serves them. */
  readonly keys: Pick<PublicKeySet, 'known' | 'currentKid'>;
  /** Epoch seconds. */
  readonly now: () => number;
}

const iso = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();

/**
 * The token signing keys and their rotation dates on the admin listener, scope audit:read: the
 * JWKS says which keys verify, not since when nor until when, which is what an operator planning a
 * rotation (tessera keys rotate) asks.
 */
export async function signingKeyRoutes(app: FastifyInstance, options: SigningKeyRoutesOptions): Promise<void> {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/admin/v1/signing-keys',
    {
      onRequest: options.guard.requireScope('audit:read'),
      schema: {
        summary: 'The token signing keys: when each was published, which one signs now, until when a retired one stays in the JWKS (scope audit:read)',
        tags: ['admin'],
        security: [{ bearer: [] }],
        response: {
          200: z.object({
            keys: z.array(
              z.object({
                kid: z.string(),
                published_at: z.string(),
                current: z.boolean().describe('New tokens are signed with it'),
                retained_until: z.string().nullable().describe('A retired key: in the JWKS until then, when every token it signed has expired'),
                in_jwks: z.boolean(),
              }),
            ),
          }),
          ...problemResponses(401, 403),
        },
      },
    },
    async (_request, reply) => {
      const now = options.now();
      const current = options.keys.currentKid();
      const keys = options.keys.known().map((key) => ({
        kid: key.kid,
        published_at: iso(key.publishedAt),
        current: key.kid === current,
        retained_until: key.retainUntil === undefined ? null : iso(key.retainUntil),
        in_jwks: key.retainUntil === undefined || key.retainUntil > now,
      }));
      return reply.header('cache-control', 'no-store').send({ keys });
    },
  );
}
