import type { TesseraConfig } from '@tessera/config';
import { CliError } from '../cli-error.js';

export async function runRelay(config: TesseraConfig): Promise<number> {
  if (!config.TESSERA_KAFKA_BROKERS) throw new CliError('the relay needs TESSERA_KAFKA_BROKERS');
  throw new CliError('the relay is not available in this build yet');
}
