import type { EventStore } from '@tessera/event-store';
import { epochSeconds } from '@tessera/timing';
import { NoEventStore, openEventStore } from '@tessera/event-store-factory';
import { createSecretHasher, openKeyFolders, type KeyFolder, type SecretHasher } from '@tessera/tokens';
import { NotFound } from './cli-error.js';
import type { CommandContext } from './command-context.js';

/** What an admin command works with: the same store and key folder the server uses. */
export interface AdminContext {
  readonly store: EventStore;
  readonly hasher: SecretHasher;
  /** Signing keys: TESSERA_KEYS_DIR, or `keys/` in the data folder. */
  readonly folder: KeyFolder;
  /** Epoch seconds, read once from the command's clock: one command, one instant. */
  readonly now: number;
}

export async function withAdminContext<T>({ config, clock }: CommandContext, run: (context: AdminContext) => Promise<T>): Promise<T> {
  const store = await openEventStore(config);
  try {
    const { signing, hashingKey } = openKeyFolders(config.TESSERA_DATA_DIR, config.TESSERA_KEYS_DIR);
    return await run({ store, folder: signing, hasher: createSecretHasher(hashingKey), now: epochSeconds(clock) });
  } finally {
    await store.close();
  }
}

/**
 * For commands that only read the log (`accounts list`, `audit`): the store must already exist,
 * and no key folder is opened, so a command pointed at the wrong folder creates neither a store
 * nor a hashing key there. It says so and exits 3 instead.
 */
export async function withExistingLog<T>({ config }: CommandContext, run: (store: EventStore) => Promise<T>): Promise<T> {
  let store: EventStore;
  try {
    store = await openEventStore(config, { mustExist: true });
  } catch (error) {
    if (error instanceof NoEventStore) {
      throw new NotFound(`no Tessera data: ${error.file} does not exist. Run the command with the server's TESSERA_DATA_DIR (or TESSERA_EVENT_STORE)`);
    }
    throw error;
  }
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}
