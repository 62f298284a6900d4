import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DomainError } from '@tessera/domain';
import type { EventStore } from '@tessera/event-store';
import { streams } from '@tessera/events';
import { problemResponses } from '@tessera/http';
import { homeRegionOfFamily } from '@tessera/tokens';
import type { AdminGuard } from './admin-auth.js';
import { FamiliesCatchingUp } from './families-catching-up.js';
import type { AccountListing } from './account-listing.js';
import type { FamiliesPages } from './families-thread.js';

/** A page of families: as the other admin lists, bounded, and each family costs one read of its stream. */
export const familyPageLimit = { default: 50, max: 100 } as const;

export interface AccountFamilyRoutesOptions {
  readonly guard: AdminGuard;
  readonly store: Pick<EventStore, 'readStream'>;
  readonly families: FamiliesPages;
  /** False when the families read model has not caught up (in time): the list answers 503 rather than miss a family. */
  readonly familiesReady: () => Promise<boolean>;
  /** The accounts as the process folds them: whether the account exists, without reading the log. */
  readonly listing: Pick<AccountListing, 'row'>;
}

const iso = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();
const FamilyRow = z.object({
  family_id: z.string(),
  generation: z.number().int().nonnegative().describe('How many times its refresh token has been rotated'),
  api_login_id: z.string(),
  issued_at: z.string().describe('When the current generation was issued'),
  access_expires_at: z.string(),
  refresh_expires_at: z.string(),
  home_region: z.string().nullable().describe('The region that issued it (TESSERA_REGION), null without regions'),
  dpop_bound: z.boolean(),
});

/**
 * An account's live token families on the admin listener, scope audit:read: who holds what now, as
 * the audit queries say who held what then; revoking one is tokens:revoke. Live is what the admin
 * families read model says (not revoked, a refresh or access token still unexpired); each family's
 * generation and expiries are read from its own stream's last event. Family ids in order, a page at a time.
 */
export async function accountFamilyRoutes(app: FastifyInstance, options: AccountFamilyRoutesOptions): Promise<void> {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.get(
    '/admin/v1/accounts/:account_id/families',
    {
      onRequest: options.guard.requireScope('audit:read'),
      schema: {
        summary: "An account's live token families (not revoked, a token still unexpired): generation, expiries, home region; a page at a time in family id order (scope audit:read)",
        tags: ['admin'],
        security: [{ bearer: [] }],
        params: z.strictObject({ account_id: z.string().regex(/^[A-Za-z0-9._~-]{1,100}$/) }),
        querystring: z.strictObject({
          limit: z.coerce.number().int().min(1).max(familyPageLimit.max).optional().describe(`At most this many families (default ${familyPageLimit.default})`),
          cursor: z.string().min(1).max(256).optional().describe('next_cursor of the page before'),
        }),
        response: { 200: z.object({ account_id: z.string(), families: z.array(FamilyRow), next_cursor: z.string().nullable() }), ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      const accountId = request.params.account_id;
      if (options.listing.row(accountId) === undefined) throw new DomainError('ERR_ACCOUNT_NOT_FOUND', `no account ${accountId}`);
      // As the account revocation does: the read model starts on first use, and says so rather than answer short.
      if (!(await options.familiesReady())) throw new FamiliesCatchingUp();
      const limit = request.query.limit ?? familyPageLimit.default;
      const { familyIds: page, more } = await options.families.liveFamiliesPage(accountId, request.query.cursor, limit);
      const rows: z.infer<typeof FamilyRow>[] = [];
      for (const familyId of page) {
        const [last] = await options.store.readStream(streams.family(familyId), { direction: 'backwards', maxCount: 1 });
        const event = last?.event;
        // Revoked since the read model answered: no longer live.
        if (event === undefined || (event.type !== 'TokenIssued' && event.type !== 'TokenRotated')) continue;
        rows.push({
          family_id: familyId,
          generation: event.generation,
          api_login_id: event.apiLoginId,
          issued_at: iso(event.issuedAt),
          access_expires_at: iso(event.accessExpiresAt),
          refresh_expires_at: iso(event.refreshExpiresAt),
          home_region: homeRegionOfFamily(familyId) ?? null,
          dpop_bound: event.jkt !== undefined,
        });
      }
      const nextCursor = more ? (page.at(-1) ?? null) : null;
      return noStore(reply).send({ account_id: accountId, families: rows, next_cursor: nextCursor });
    },
  );
}

function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store');
}
