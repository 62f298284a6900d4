/**
 * Child process: the ceiling for a protected route — a bare fastify 5 POST route with no auth and
 * no schema, answering a body shaped like Tessera's charge acknowledgement (logged-route.mjs). Same
 * transport as Tessera: HTTPS on 127.0.0.1 with the same certificate and key. Prints its port.
 *
 * With BENCH_FASTIFY_ACCESS_LOG (a file), it also writes one pino access line per request, as
 * Tessera writes for each token operation: the same fields, from an onResponse hook, fastify's own
 * request lines off, through pino's default (synchronous) destination on that file.
 *
 * env: BENCH_TLS_CERT, BENCH_TLS_KEY (PEM files), BENCH_FASTIFY_ACCESS_LOG (optional).
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { addChargeRoute } from './logged-route.mjs';

const https = { cert: readFileSync(process.env.BENCH_TLS_CERT ?? ''), key: readFileSync(process.env.BENCH_TLS_KEY ?? '') };
const app = Fastify({ https, logger: false, disableRequestLogging: true });
addChargeRoute(app, process.env.BENCH_FASTIFY_ACCESS_LOG);
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ port: (app.server.address() as AddressInfo).port })}\n`);
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
