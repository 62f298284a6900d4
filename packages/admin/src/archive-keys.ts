import { z } from 'zod';
import { archivePublicKeys } from '@tessera/archive';
import type { AuditReadModel } from '@tessera/audit';

export const ArchiveKeysResponse = z.object({
  keys: z.array(
    z.object({
      fingerprint: z.string().describe("SHA-256 (hex) of the public key's DER (SubjectPublicKeyInfo)"),
      public_key_pem: z.string().nullable().describe('The key as the archive holds it (keys/<fingerprint>.pem); null when that file is missing or holds another key'),
    }),
  ),
  manifest_entries: z.number().int().describe('The sequence of the head entry the log recorded (entries are numbered from 1, without a gap); 0 before the first'),
  manifest_head_sha256: z.string().nullable().describe('SHA-256 of that head entry: record it, and an archive that no longer reaches it, unchanged, had entries cut off or replaced'),
});

/**
 * The archive's pins as the event log records them: every key Tessera made or adopted, by
 * fingerprint, with its public key from the archive, and the manifest's head after the last run.
 * Keys found in the archive's `keys/` that the log does not record are not listed: they are not trusted.
 * Saved as it comes, this answer is the file `tessera archive verify --pin` takes.
 */
export function archiveKeys(archiveDir: string, pins: NonNullable<ReturnType<AuditReadModel['archivePins']>>): z.infer<typeof ArchiveKeysResponse> {
  const held = new Map(archivePublicKeys(archiveDir).filter((key) => key.matchesName).map((key) => [key.fingerprint, key.pem]));
  return {
    keys: pins.keys.map((fingerprint) => ({ fingerprint, public_key_pem: held.get(fingerprint) ?? null })),
    manifest_entries: pins.head?.sequence ?? 0,
    manifest_head_sha256: pins.head?.sha256 ?? null,
  };
}
