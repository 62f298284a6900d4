import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { publicKeyFile, verifyBytes } from './archive-key.js';
import type { ArchivePins } from './archive-pins.js';
import { manifestDir, manifestFormat, type ManifestEntry } from './manifest.js';

/**
 * The highest log position the archive holds, as its newest segment entry signed by a pinned key
 * says; undefined when it holds none, or that entry does not check out. Read from the end of the
 * manifest, so it costs a directory listing and an entry or two: a log opened beside its archive
 * compares it with its own head on every open.
 *
 * Its use: a log restored from an older copy beside a newer archive must not hand out, to new
 * events, positions the archive already gives to archived ones. The newest entry alone is checked
 * (its key pinned, its signature): a forged one could otherwise move the log's positions anywhere.
 */
export function archivedThrough(archiveDir: string, pins: () => Promise<ArchivePins>): { readonly unchecked: bigint | undefined; readonly checked: () => Promise<bigint | undefined> } {
  const folder = manifestDir(archiveDir);
  const names = existsSync(folder) ? readdirSync(folder).filter((name) => /^\d{8}\.json$/.test(name)).sort() : [];
  let newest: { entry: Extract<ManifestEntry, { kind: 'segment' }>; bytes: Buffer; file: string } | undefined;
  for (let i = names.length - 1; i >= 0 && newest === undefined; i -= 1) {
    const file = join(folder, names[i]!);
    const bytes = readFileSync(file);
    let entry: ManifestEntry;
    try {
      // Checked below before anything counts on it.
      entry = JSON.parse(bytes.toString('utf8')) as ManifestEntry;
    } catch {
      return { unchecked: undefined, checked: async () => undefined };
    }
    if (entry.format === manifestFormat && entry.kind === 'segment') newest = { entry, bytes, file };
  }
  if (newest === undefined || !/^\d+$/.test(String(newest.entry.segment?.max_position))) return { unchecked: undefined, checked: async () => undefined };
  const position = BigInt(newest.entry.segment.max_position);
  const { entry, bytes, file } = newest;
  return {
    unchecked: position,
    checked: async () => {
      if (!(await pins()).keys.has(entry.key_fingerprint)) return undefined;
      const keyFile = publicKeyFile(archiveDir, entry.key_fingerprint);
      const signatureFile = file.replace(/\.json$/, '.sig');
      if (!existsSync(keyFile) || !existsSync(signatureFile)) return undefined;
      return verifyBytes(readFileSync(keyFile, 'utf8'), bytes, readFileSync(signatureFile)) ? position : undefined;
    },
  };
}
