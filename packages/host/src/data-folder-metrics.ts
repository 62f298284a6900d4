import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { registerGauges, type Metrics } from './metrics.js';
import { errorCode } from '@tessera/contracts';

/**
 * Free and total space of the file system the data folder is on, read at scrape time: the event
 * log (SQLite), the audit index, the relay's checkpoints and the keys all live there, and SQLite
 * stops taking appends when it is full. Free is what the service's (unprivileged) user may still
 * write. A folder not made yet is measured where it will be made: its nearest existing parent.
 */
export function registerDataFolderGauges(metrics: Metrics, dataDir: string): void {
  registerGauges(metrics, {
    tessera_data_dir_free_bytes: { help: 'Bytes the service may still write on the file system of the data folder (TESSERA_DATA_DIR)', read: async () => (await measure(dataDir)).free },
    tessera_data_dir_size_bytes: { help: 'Size in bytes of the file system the data folder (TESSERA_DATA_DIR) is on', read: async () => (await measure(dataDir)).size },
  });
}

async function measure(folder: string): Promise<{ free: number; size: number }> {
  for (let at = folder; ; at = dirname(at)) {
    try {
      const { bavail, blocks, bsize } = await statfs(at);
      return { free: bavail * bsize, size: blocks * bsize };
    } catch (error) {
      // statfs fails with a Node system error, which carries its errno code.
      if (errorCode(error) !== 'ENOENT' || dirname(at) === at) throw error;
    }
  }
}
