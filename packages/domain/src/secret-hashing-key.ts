import { isEventOf, secretHashingKeyEventTypes, type SecretHashingKeyEvent } from '@tessera/events';
import type { Decider } from './decider.js';
import { DomainError, assertNever } from './errors.js';

/**
 * The secret-hashing key a log is written with (its own stream, `secrethashingkey`), by keyed
 * fingerprint only. Secrets are stored as keyed hashes: a writer with another key writes hashes no
 * reader can check, so every writer is held to the key the log records before its first append.
 */
export type SecretHashingKeyState =
  | { readonly status: 'unrecorded' }
  | {
      readonly status: 'recorded';
      /** The first key recorded: the one a hash with no `hashingKey` was made with. */
      readonly original: string;
      /** The key new hashes are made with. */
      readonly current: string;
      /** Keys rotated away, oldest first: kept to check the hashes they made. */
      readonly retired: readonly string[];
    };

export const initialSecretHashingKeyState = (): SecretHashingKeyState => ({ status: 'unrecorded' });

/**
 * Who is about to write. Only a long-running server may record the first fingerprint of a log that
 * already holds events: its key is the one that has been serving them. A command-line tool on such
 * a log could be holding any key.
 */
export type LogWriter = 'server' | 'cli';

export type SecretHashingKeyCommand =
  | {
      /** A writer's check before its first append: records the key on a log that has none. */
      readonly type: 'CheckSecretHashingKey';
      readonly writer: LogWriter;
      /** The fingerprint of the writer's `secret-hashing.key`; undefined when it has none. */
      readonly inUse: string | undefined;
      /** The fingerprints of every hashing key the writer holds, `inUse` and kept ones. */
      readonly held: readonly string[];
      /** Whether the log holds any event at all. */
      readonly logHoldsEvents: boolean;
      /** Epoch seconds. */
      readonly now: number;
    }
  | {
      /** `keys rotate-hashing`: new hashes under `to` from now on. */
      readonly type: 'RotateSecretHashingKey';
      /** The key the rotating writer holds as current. */
      readonly from: string;
      readonly to: string;
      readonly now: number;
    };

/** Idempotent, so a process may apply its own event and then the log's copy of it. */
export function evolveSecretHashingKey(state: SecretHashingKeyState, event: SecretHashingKeyEvent): SecretHashingKeyState {
  switch (event.type) {
    case 'SecretHashingKeyRecorded':
      return state.status === 'unrecorded' ? { status: 'recorded', original: event.fingerprint, current: event.fingerprint, retired: [] } : state;
    case 'SecretHashingKeyRotated': {
      if (state.status === 'unrecorded') return { status: 'recorded', original: event.previousFingerprint, current: event.fingerprint, retired: [event.previousFingerprint] };
      if (state.current === event.fingerprint || state.retired.includes(event.fingerprint)) return state;
      return { ...state, current: event.fingerprint, retired: [...state.retired, state.current] };
    }
    default:
      return assertNever(event);
  }
}

/** Every key of the log, current and retired. */
export function knownHashingKeys(state: SecretHashingKeyState): readonly string[] {
  return state.status === 'recorded' ? [...state.retired, state.current] : [];
}

export function decideSecretHashingKey(command: SecretHashingKeyCommand, state: SecretHashingKeyState): SecretHashingKeyEvent[] {
  switch (command.type) {
    case 'CheckSecretHashingKey':
      return check(command, state);
    case 'RotateSecretHashingKey': {
      if (state.status === 'unrecorded') throw new DomainError('ERR_LOG_HASHING_KEY_UNRECORDED', 'the log records no secret-hashing key yet');
      if (command.from !== state.current) throw new DomainError('ERR_LOG_HASHING_KEY_MISMATCH', `the log's current secret-hashing key is ${state.current}, not ${command.from}`);
      if (knownHashingKeys(state).includes(command.to)) throw new DomainError('ERR_LOG_HASHING_KEY_MISMATCH', `secret-hashing key ${command.to} was in use before: a rotation needs a new key`);
      return [{ type: 'SecretHashingKeyRotated', v: 1, fingerprint: command.to, previousFingerprint: command.from, at: command.now }];
    }
    default:
      return assertNever(command);
  }
}

function check(command: Extract<SecretHashingKeyCommand, { type: 'CheckSecretHashingKey' }>, state: SecretHashingKeyState): SecretHashingKeyEvent[] {
  if (state.status === 'unrecorded') {
    if (command.logHoldsEvents && command.writer === 'cli') {
      throw new DomainError('ERR_LOG_HASHING_KEY_UNRECORDED', 'the log holds events written before it recorded its secret-hashing key');
    }
    if (command.inUse === undefined) throw new DomainError('ERR_LOG_HASHING_KEY_MISSING', 'the log holds events and this writer has no secret-hashing key');
    return [{ type: 'SecretHashingKeyRecorded', v: 1, fingerprint: command.inUse, at: command.now }];
  }
  if (command.inUse === undefined) throw new DomainError('ERR_LOG_HASHING_KEY_MISSING', `this writer has no secret-hashing key; the log's is ${state.current}`);
  if (!knownHashingKeys(state).includes(command.inUse)) {
    throw new DomainError('ERR_LOG_HASHING_KEY_MISMATCH', `this writer's secret-hashing key is ${command.inUse}; the log was written with ${state.current}`);
  }
  // A retired key in use, with the current one not held: a server may wait for it (it is unready
  // meanwhile and makes no hash), a one-shot command cannot.
  if (!command.held.includes(state.current) && command.writer === 'cli') {
    throw new DomainError('ERR_LOG_HASHING_KEY_MISSING', `this writer's secret-hashing key ${command.inUse} was retired; the log's current key ${state.current} is not here`);
  }
  return [];
}

export const secretHashingKeyDecider: Decider<SecretHashingKeyCommand, SecretHashingKeyState, SecretHashingKeyEvent> = {
  isEvent: (event) => isEventOf(secretHashingKeyEventTypes, event),
  decide: decideSecretHashingKey,
  evolve: evolveSecretHashingKey,
  initialState: initialSecretHashingKeyState,
};
