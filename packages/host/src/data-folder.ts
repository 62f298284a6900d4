import { chmodSync, statSync } from 'node:fs';
import { errorCode } from '@tessera/contracts';

/**
 * The data folder holds the event log, the hashing key and the TLS key: only the service's user
 * may list or read it. What Tessera creates there is made 0700 already; this tightens a folder
 * that an older release or an operator made with the umask's mode. A folder that does not exist
 * is left alone (an EventStoreDB service with its own TLS material may never need one).
 */
export function ownerOnlyDataFolder(dataDir: string): void {
  let mode: number;
  try {
    mode = statSync(dataDir).mode & 0o777;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  if (mode !== 0o700) chmodSync(dataDir, 0o700);
}
