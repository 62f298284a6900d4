import { InvariantBroken, streams } from '@tessera/events';
import { DomainError, secretHashingKeyDecider, type LogWriter, type SecretHashingKeyState } from '@tessera/domain';
import { handleCommand, type CommandStore, type EventStore } from '@tessera/event-store';
import { createHashingKey, hashingKeyFile, hashingKeyFolder, readHashingKeys, retiredHashingKeyFile, type HeldHashingKeys } from '@tessera/tokens';
import { LogHashingKeyRefusal } from './log-hashing-key-refusal.js';

export interface LogHashingKeyCheck {
  readonly writer: LogWriter;
  readonly dataDir: string;
  /** TESSERA_KEYS_DIR: a different `secret-hashing.key` there is refused. */
  readonly keysDir?: string | undefined;
  /** How the log is named in a refusal (its file, or which variable names the server): never a connection string, which can hold a password. */
  readonly logName: string;
  /** Epoch seconds. */
  readonly now: number;
  /** Whether a key may be made when the log is new and the writer has none (false: a command that hashes nothing). */
  readonly mayCreateKey: boolean;
}

export interface CheckedHashingKey {
  /** What the log records, with this writer's key recorded if the log had none. */
  readonly state: Extract<SecretHashingKeyState, { status: 'recorded' }>;
  /** The keys this writer holds. */
  readonly held: HeldHashingKeys;
}

/**
 * The check every writer makes before its first append: the log's record of its secret-hashing key
 * against the keys in this writer's data folder. A new, empty log records the writer's key (made
 * here if the folder has none). A log written before fingerprints existed is recorded only by a
 * server; a command-line tool refuses. A log that records a key is appended to only by a writer
 * that holds it, and never gets a new key made for it. Refusals change nothing on disk or in the log.
 */
export async function checkLogHashingKey(store: CommandStore & Pick<EventStore, 'headPosition'>, check: LogHashingKeyCheck): Promise<CheckedHashingKey> {
  const stream = streams.secretHashingKey();
  const logHoldsEvents = (await store.headPosition()) !== undefined;
  let held = readHashingKeys(check.dataDir, check.keysDir);
  // A new log: the first writer brings the key, made here if this folder has none.
  if (!logHoldsEvents && held.inUse === undefined && check.mayCreateKey) {
    createHashingKey(check.dataDir);
    held = readHashingKeys(check.dataDir, check.keysDir);
  }
  try {
    const { state } = await handleCommand(store, {
      stream,
      decider: secretHashingKeyDecider,
      command: () => ({ type: 'CheckSecretHashingKey' as const, writer: check.writer, inUse: held.inUse?.fingerprint, held: [...held.byFingerprint.keys()], logHoldsEvents, now: check.now }),
      metadata: { actor: check.writer },
      // Two writers recording a new log's key at once: the second compares its key with the first's.
      onConflict: { retries: 3 },
    });
    if (state.status !== 'recorded') throw new InvariantBroken('the secret-hashing key check left the log unrecorded');
    return { state, held };
  } catch (error) {
    if (error instanceof DomainError) throw refusal(error, check, held, await recordedState(store));
    throw error;
  }
}

async function recordedState(store: CommandStore): Promise<SecretHashingKeyState> {
  const events = await store.readStream(streams.secretHashingKey());
  return events.reduce(
    (state, { event }) => (secretHashingKeyDecider.isEvent(event) ? secretHashingKeyDecider.evolve(state, event) : state),
    secretHashingKeyDecider.initialState(),
  );
}

/** The domain's refusal, as one line naming the files and what to do. */
function refusal(error: DomainError, check: LogHashingKeyCheck, held: HeldHashingKeys, state: SecretHashingKeyState): Error {
  const file = hashingKeyFile(check.dataDir);
  const nothing = check.writer === 'cli' ? 'nothing was written and no key was made' : 'nothing was written';
  const current = state.status === 'recorded' ? state.current : undefined;
  switch (error.code) {
    case 'ERR_LOG_HASHING_KEY_UNRECORDED':
      return new LogHashingKeyRefusal(
        error.code,
        `${check.logName} was written before Tessera recorded the secret-hashing key of a log: start its server (tessera start or tessera issuer) once with its data folder, which records the key it serves with, then run this again; ${nothing}`,
      );
    case 'ERR_LOG_HASHING_KEY_MISMATCH':
      return new LogHashingKeyRefusal(
        error.code,
        `${file} holds secret-hashing key ${held.inUse?.fingerprint ?? '(none)'}, but ${check.logName} was written with key ${current ?? '(unknown)'}: ` +
          `use the TESSERA_DATA_DIR the log was written with (the one whose server logs this fingerprint at start), or put that data folder's keys/secret-hashing.key in ${hashingKeyFolder(check.dataDir)}; ${nothing}`,
      );
    case 'ERR_LOG_HASHING_KEY_MISSING':
      if (current === undefined) {
        return new LogHashingKeyRefusal(
          error.code,
          `${check.logName} records no secret-hashing key, and ${file} does not exist: a key is made only with a new log, never for one already written ` +
            `(its stored secrets would stop verifying); put the key the log was written with there; ${nothing}`,
        );
      }
      if (held.inUse !== undefined) {
        return new LogHashingKeyRefusal(
          error.code,
          `${file} holds secret-hashing key ${held.inUse.fingerprint}, which tessera keys rotate-hashing retired; ${check.logName} is written with key ${current} now: ` +
            `copy keys/secret-hashing.key of the data folder the rotation ran in to ${retiredHashingKeyFile(check.dataDir, current)}; ${nothing}`,
        );
      }
      return new LogHashingKeyRefusal(
        error.code,
        `${check.logName} was written with secret-hashing key ${current}, and ${file} does not exist: use the TESSERA_DATA_DIR the log was written with, or copy that data folder's keys/secret-hashing.key to ${file}; ${nothing}`,
      );
    default:
      return error;
  }
}
