/**
 * Child process: the ceiling for a protected route — a bare fastify 5 POST route with no auth,
 * no logger and no schema, answering a body shaped like Tessera's charge acknowledgement. Same
 * transport as Tessera: HTTPS on 127.0.0.1 with the same certificate and key. Prints its port.
 *
 * env: BENCH_TLS_CERT, BENCH_TLS_KEY (PEM files).
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';

const app = Fastify({
  https: { cert: readFileSync(process.env.BENCH_TLS_CERT ?? ''), key: readFileSync(process.env.BENCH_TLS_KEY ?? '') },
  logger: false,
});
app.post('/v5/Transaction/charge', async () => ({
  accepted: true,
  account_id: 'acc_bench',
  note: 'example route: nothing was charged',
}));
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ port: (app.server.address() as AddressInfo).port })}\n`);
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
