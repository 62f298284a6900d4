import { secretHashingKeyEventTypes } from '@tessera/events';
import { logReader, type GuardedEventStore, type LogReader } from '@tessera/event-store';
import { checkLogHashingKey, LogHashingKeyRefusal, SecretHashingKeyring } from '@tessera/hashing-key';
import { epochSeconds, Retry, StartFailure, untilAvailable, type Host } from '@tessera/host';

export interface SecretHashing {
  /** The keys this process hashes and checks secrets with. */
  readonly keyring: SecretHashingKeyring;
  /** Resolves once this process's key has been checked against the log (and recorded on a log that had none): nothing is appended before. */
  readonly checked: Promise<void>;
  /** Follows the log's record of its key, so a rotation made elsewhere is seen within a poll. */
  readonly readers: readonly LogReader[];
}

/** How often a key the log rotated to, and this data folder lacks, is looked for again. */
const lookAgain = { initialMs: 1000, maxMs: 5000 };

/**
 * The secret-hashing key of a long-running writer (an issuer, the all-in-one). Before its first
 * append it checks its key against the log's record, and records it on a log that has none: a
 * server's key is the one that has been serving the log. A refusal fails the start (one line, exit 1).
 *
 * Later, a rotation to a key this data folder does not hold (`keys rotate-hashing` ran on another
 * host) never makes it hash with the retired key: it becomes unready, naming the file it waits
 * for, and answers 503 where a new hash is needed, while it reads the folder again on a timer.
 */
export function wireSecretHashing(host: Host, store: GuardedEventStore): SecretHashing {
  const { config } = host;
  const keyring = new SecretHashingKeyring({ dataDir: config.TESSERA_DATA_DIR, keysDir: config.TESSERA_KEYS_DIR }, { clock: host.clock });
  const logName = config.TESSERA_EVENT_STORE === undefined ? `the log in ${config.TESSERA_DATA_DIR}` : 'the log TESSERA_EVENT_STORE names';
  const waiting = lookForCurrentKey(host, keyring);
  const checked = untilAvailable(store, () =>
    checkLogHashingKey(store, { writer: 'server', dataDir: config.TESSERA_DATA_DIR, keysDir: config.TESSERA_KEYS_DIR, logName, now: epochSeconds(host.clock), mayCreateKey: true }),
  ).then(
    ({ state }) => {
      keyring.seed(state);
      host.log.info({ fingerprint: state.current }, 'secret-hashing key checked against the log');
      waiting.start();
    },
    (error: unknown) => {
      throw error instanceof LogHashingKeyRefusal ? new StartFailure(error.message, { cause: error }) : error;
    },
  );
  host.untilReady(checked);
  host.readiness.add('secret-hashing key', () => keyring.missing());
  const readers = [
    logReader(secretHashingKeyEventTypes, ({ event }) => {
      keyring.apply(event);
      waiting.start();
    }),
  ];
  return { keyring, checked, readers };
}

/** While the log's current key is not on disk, reads the folder again with backoff; logs the wait once, then every tenth look, and the end of it. */
function lookForCurrentKey(host: Host, keyring: SecretHashingKeyring): { start(): void } {
  const retry = new Retry({
    backoff: lookAgain,
    clock: host.clock,
    log: {
      logger: host.log,
      failing: 'the secret-hashing key the log rotated to is not in the data folder: no new hash is made until it is there',
      recovered: 'the secret-hashing key the log rotated to is in the data folder',
    },
  });
  let timer: (() => void) | undefined;
  let closed = false;
  host.onClose(async () => {
    closed = true;
    timer?.();
  });
  const look = () => {
    timer = undefined;
    if (closed) return;
    const missing = keyring.missing();
    if (missing === undefined || keyring.reread()) {
      retry.succeeded();
      return;
    }
    schedule(new Error(missing));
  };
  const schedule = (cause: Error) => {
    timer = host.scheduler.after(retry.failed(cause), look);
  };
  return {
    start() {
      if (timer !== undefined || closed || keyring.currentFingerprint === undefined) return;
      const missing = keyring.missing();
      if (missing !== undefined) schedule(new Error(missing));
    },
  };
}
