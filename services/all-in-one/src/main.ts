import type { TesseraConfig } from '@tessera/config';
import { runHost, type RunningServer, type StartOptions } from '@tessera/server';
import { composeAllInOne } from './all-in-one-composition.js';

/** `tessera start`: the embedded default, every role in one process (see composeAllInOne). */
export function runAllInOne(config: TesseraConfig, options: StartOptions = {}): Promise<RunningServer> {
  return runHost(config, 'all-in-one', composeAllInOne, options);
}
