import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { SecretHashingKeyState } from '@tessera/domain';
import type { EventStore } from '@tessera/event-store';
import { NoEventStore, openEventStore } from '@tessera/event-store-factory';
import { checkLogHashingKey } from '@tessera/hashing-key';
import { epochSeconds } from '@tessera/timing';
import { createSecretHasher, openSigningKeyFolder, type HeldHashingKey, type KeyFolder, type SecretHasher } from '@tessera/tokens';
import { NotFound } from './cli-error.js';
import type { CommandContext } from './command-context.js';

/** What an admin command works with: the same store and key folder the server uses. */
export interface AdminContext {
  readonly store: EventStore;
  /** The log's current secret-hashing key, held by this data folder. */
  readonly hasher: SecretHasher;
  /** The log's record of its secret-hashing key, and that key's file in this data folder. */
  readonly hashing: { readonly state: Extract<SecretHashingKeyState, { status: 'recorded' }>; readonly current: HeldHashingKey };
  /** Signing keys: TESSERA_KEYS_DIR, or `keys/` in the data folder. */
  readonly folder: KeyFolder;
  /** Epoch seconds, read once from the command's clock: one command, one instant. */
  readonly now: number;
}

/**
 * For commands that write. Before anything is appended, this data folder's secret-hashing key is
 * checked against the log's record of it (`checkLogHashingKey`): a folder whose key is not the
 * log's, or that has none for a log that records one, is refused, and nothing is made there. A new,
 * empty log is given this folder's key (made if there is none). On the default data folder
 * (`./data`, no TESSERA_DATA_DIR or TESSERA_EVENT_STORE) with no log there, nothing is made at all:
 * the command was run from another folder than the server's, and a new log there would take
 * accounts the server never sees.
 */
export async function withAdminContext<T>(command: CommandContext, run: (context: AdminContext) => Promise<T>): Promise<T> {
  const { config, clock } = command;
  const defaultLogFile = join(config.TESSERA_DATA_DIR, 'events.db');
  if (command.defaultLog && !existsSync(defaultLogFile)) {
    throw new NotFound(
      `no Tessera data: ${defaultLogFile} does not exist. Run the command from the folder the server runs in (it keeps ./data there), ` +
        'or with the server\'s TESSERA_DATA_DIR (or TESSERA_EVENT_STORE); to start a new data folder on purpose, name it with TESSERA_DATA_DIR',
    );
  }
  const store = await openEventStore(config);
  try {
    const now = epochSeconds(clock);
    const { state, held } = await checkLogHashingKey(store, {
      writer: 'cli',
      dataDir: config.TESSERA_DATA_DIR,
      keysDir: config.TESSERA_KEYS_DIR,
      logName: logNameOf(config),
      now,
      mayCreateKey: true,
    });
    // The check refuses a command-line writer that does not hold the log's current key.
    const current = held.byFingerprint.get(state.current)!;
    const folder = openSigningKeyFolder(config.TESSERA_DATA_DIR, config.TESSERA_KEYS_DIR);
    return await run({ store, folder, hasher: createSecretHasher(current.key), hashing: { state, current }, now });
  } finally {
    await store.close();
  }
}

/**
 * For commands that only read the log (`accounts list`, `audit`), and `admin-tokens revoke`: the
 * store must already exist, and no key is made, so a command pointed at the wrong folder creates
 * neither a store nor a hashing key there. It says so and exits 3 instead. With `checkKey`, the
 * command appends (without making a hash): its data folder's key is checked against the log's first.
 */
export async function withExistingLog<T>(command: CommandContext, run: (store: EventStore) => Promise<T>, options: { readonly checkKey?: boolean } = {}): Promise<T> {
  const { config } = command;
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
    if (options.checkKey) {
      await checkLogHashingKey(store, {
        writer: 'cli',
        dataDir: config.TESSERA_DATA_DIR,
        keysDir: config.TESSERA_KEYS_DIR,
        logName: logNameOf(config),
        now: epochSeconds(command.clock),
        mayCreateKey: false,
      });
    }
    return await run(store);
  } finally {
    await store.close();
  }
}

/** The log as a refusal names it: its file, or the variable that names a server (a connection string can hold a password). */
function logNameOf(config: CommandContext['config']): string {
  const target = config.TESSERA_EVENT_STORE;
  if (target === undefined) return `the log ${join(config.TESSERA_DATA_DIR, 'events.db')}`;
  if (target.startsWith('sqlite:')) return `the log ${target.slice('sqlite:'.length)}`;
  return 'the log TESSERA_EVENT_STORE names';
}
