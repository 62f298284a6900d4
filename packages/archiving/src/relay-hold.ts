import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * How far the relay of this data folder has published: the lowest position among its checkpoint
 * files (`relay-checkpoint.json`, and with a region `relay-accounts-checkpoint.json`, as the relay
 * writes them). Undefined while one is missing or unreadable: a relay that has published nothing
 * yet holds everything back.
 */
export function relayCheckpointsPast(dataDir: string, withRegion: boolean): bigint | undefined {
  const files = ['relay-checkpoint.json', ...(withRegion ? ['relay-accounts-checkpoint.json'] : [])];
  let lowest: bigint | undefined;
  for (const name of files) {
    const file = join(dataDir, name);
    if (!existsSync(file)) return undefined;
    let position: unknown;
    try {
      // The relay's own file (relay-checkpoint.ts): { position: "<decimal>", savedAt }.
      position = (JSON.parse(readFileSync(file, 'utf8')) as { position?: unknown }).position;
    } catch {
      return undefined;
    }
    if (typeof position !== 'string' || !/^\d+$/.test(position)) return undefined;
    const past = BigInt(position);
    lowest = lowest === undefined || past < lowest ? past : lowest;
  }
  return lowest;
}
