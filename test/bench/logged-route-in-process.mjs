// Loaded into a bench Tessera with `node --import` (bench only, never in production): once the
// server has made its TLS certificate, its main thread also serves the logged route
// (logged-route.mjs) on a port of its own, with its own fastify instance and none of Tessera's
// hooks, and writes that port to the file BENCH_LOGGED_ROUTE_PORT_FILE names. The bench then loads
// the protected request and this route in turn on one process: what differs between the two is
// the request's own work, not the process they run in.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import Fastify from 'fastify';
import { addChargeRoute } from './logged-route.mjs';

const portFile = process.env.BENCH_LOGGED_ROUTE_PORT_FILE;
const dataDir = process.env.TESSERA_DATA_DIR;
// Worker threads inherit --import: the route belongs on the main thread, where Tessera's routes run.
if (isMainThread && portFile && dataDir) {
  const tls = { cert: join(dataDir, 'tls', 'self-signed.crt'), key: join(dataDir, 'tls', 'self-signed.key') };
  const start = async () => {
    const app = Fastify({ https: { cert: readFileSync(tls.cert), key: readFileSync(tls.key) }, logger: false, disableRequestLogging: true });
    addChargeRoute(app, join(dataDir, 'logged-route-in-process.log'));
    await app.listen({ host: '127.0.0.1', port: 0 });
    // Whole or not at all: the bench reads the file as soon as it exists.
    writeFileSync(`${portFile}.partial`, String(app.server.address().port));
    renameSync(`${portFile}.partial`, portFile);
  };
  // The server writes its certificate while it starts, after this module has run.
  const whenCertified = () => {
    if (existsSync(tls.cert) && existsSync(tls.key)) start().catch((error) => process.stderr.write(`logged route in process: ${error}\n`));
    else setTimeout(whenCertified, 100).unref();
  };
  whenCertified();
}
