import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { archivePublicKeys, liveSegments, readManifest, sha256 } from '@tessera/archive';
import { problemResponses } from '@tessera/http';
import type { AdminGuard } from './admin-auth.js';

export interface ArchiveStatusRoutesOptions {
  readonly guard: AdminGuard;
  readonly archiveDir: string;
}

const ArchiveStatus = z.object({
  segments: z.number().int().nonnegative(),
  archived_events: z.number().int().nonnegative(),
  archive_bytes: z.number().int().nonnegative(),
  oldest_archived: z.string().nullable(),
  newest_archived: z.string().nullable(),
  manifest_entries: z.number().int().nonnegative(),
  deleted_segments: z.number().int().nonnegative().describe('Segments deleted past TESSERA_AUDIT_RETENTION'),
  manifest_head_sha256: z.string().nullable(),
  keys: z.array(z.string()).describe("Fingerprints of the public keys in the archive's keys/ (GET /admin/v1/archive/keys says which the log trusts)"),
});

/**
 * The archive's status on the admin listener, scope audit:read: what `tessera archive status`
 * prints of the archive itself, read from its manifest (small: one entry a run). Verifying the
 * archive reads every segment, which is `tessera archive verify`'s work, not a request's.
 */
export async function archiveStatusRoutes(app: FastifyInstance, options: ArchiveStatusRoutesOptions): Promise<void> {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/admin/v1/archive/status',
    {
      onRequest: options.guard.requireScope('audit:read'),
      schema: {
        summary: "The archive's segments, events, bytes, time span and manifest head, as tessera archive status prints them (scope audit:read)",
        tags: ['admin'],
        security: [{ bearer: [] }],
        response: { 200: ArchiveStatus, ...problemResponses(401, 403) },
      },
    },
    async (_request, reply) => {
      const entries = readManifest(options.archiveDir);
      const segments = liveSegments(entries);
      const times = segments.flatMap(({ segment }) => [segment.min_time, segment.max_time]).sort();
      const last = entries.at(-1);
      return reply.header('cache-control', 'no-store').send({
        segments: segments.length,
        archived_events: segments.reduce((sum, { segment }) => sum + segment.rows, 0),
        archive_bytes: segments.reduce((sum, { segment }) => sum + segment.bytes, 0),
        oldest_archived: times[0] ?? null,
        newest_archived: times.at(-1) ?? null,
        manifest_entries: entries.length,
        deleted_segments: entries.reduce((sum, { entry }) => sum + (entry.kind === 'deletion' ? entry.deleted.length : 0), 0),
        manifest_head_sha256: last === undefined ? null : sha256(last.bytes),
        keys: archivePublicKeys(options.archiveDir).map((key) => key.fingerprint),
      });
    },
  );
}
