import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { archivePublicKeys, manifestDir, sha256 } from '@tessera/archive';

export const ArchiveKeysResponse = z.object({
  keys: z.array(z.object({ fingerprint: z.string().describe('SHA-256 (hex) of the public key\'s DER (SubjectPublicKeyInfo)'), public_key_pem: z.string() })),
  manifest_entries: z.number().int(),
  manifest_head_sha256: z.string().nullable().describe('SHA-256 of the newest manifest entry: record it, and a later answer that does not chain to it shows entries were cut off'),
});

/** The archive's public keys (every one ever used, kept in the archive) and the manifest's head. */
export function archiveKeys(archiveDir: string): z.infer<typeof ArchiveKeysResponse> {
  const folder = manifestDir(archiveDir);
  const entries = existsSync(folder) ? readdirSync(folder).filter((name) => /^\d{8}\.json$/.test(name)).sort() : [];
  const head = entries[entries.length - 1];
  return {
    keys: archivePublicKeys(archiveDir)
      .filter((key) => key.matchesName)
      .map((key) => ({ fingerprint: key.fingerprint, public_key_pem: key.pem })),
    manifest_entries: entries.length,
    manifest_head_sha256: head === undefined ? null : sha256(readFileSync(join(folder, head))),
  };
}
