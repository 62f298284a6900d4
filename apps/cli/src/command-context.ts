import type { TesseraConfig } from '@tessera/config';
import type { Clock } from '@tessera/timing';

/** What every command runs with: the configuration from TESSERA_* and the one clock. */
export interface CommandContext {
  readonly config: TesseraConfig;
  readonly clock: Clock;
}
