import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Replaces `file` with `text` so that a crash at any moment leaves either the old content or the
 * new, never a mix, and the new one survives a power cut once this resolves: a temporary file
 * (0600, even when a crash left an older one behind with another mode) written and fsynced,
 * renamed over the file, then the folder fsynced so the rename itself is on disk. Asynchronous
 * calls: the fsyncs run on libuv's pool, not on the thread that answers requests. The folder must
 * exist.
 */
export async function replaceFileDurably(file: string, text: string): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  const handle = await open(temp, 'w', 0o600);
  try {
    // open() keeps the mode of a temporary file a crash left: the rename would carry it over.
    await handle.chmod(0o600);
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, file);
  const folder = await open(dirname(file), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}
