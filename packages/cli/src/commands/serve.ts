import type { TesseraConfig } from '@tessera/config';
import { startServer, type Role } from '@tessera/server';

/** Runs until SIGTERM or SIGINT, then drains in-flight requests and exits 0. Returns -1: still running. */
export async function runServe(config: TesseraConfig, role: Role): Promise<number> {
  const server = await startServer(config, role);
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return -1;
}
