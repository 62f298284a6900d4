import { CodedError } from '@tessera/contracts';

/** Why a writer may not append to a log with the secret-hashing key it holds. */
export type LogHashingKeyRefusalCode = 'ERR_LOG_HASHING_KEY_MISMATCH' | 'ERR_LOG_HASHING_KEY_MISSING' | 'ERR_LOG_HASHING_KEY_UNRECORDED';

/**
 * A writer refused before its first append: its key is not the log's, it has none for a log that
 * records one, or (a command-line tool) the log was written before it recorded its key. The
 * message is one line that says which key and which data folder the log was written with.
 */
export class LogHashingKeyRefusal extends CodedError {
  constructor(
    readonly code: LogHashingKeyRefusalCode,
    message: string,
  ) {
    super(message);
    this.name = 'LogHashingKeyRefusal';
  }
}
