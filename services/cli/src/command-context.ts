import type { TesseraConfig } from '@tessera/config';
import type { Clock } from '@tessera/timing';

/** What every command runs with: the configuration from TESSERA_* and the one clock. */
export interface CommandContext {
  readonly config: TesseraConfig;
  readonly clock: Clock;
  /**
   * Neither TESSERA_DATA_DIR nor TESSERA_EVENT_STORE is set: the log is `./data/events.db` of the
   * folder the command runs in, so a command run from the wrong folder would meet no log there.
   */
  readonly defaultLog: boolean;
}
