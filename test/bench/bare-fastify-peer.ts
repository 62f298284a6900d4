import { startChild, type BenchChild } from './children.js';
import type { LoadTarget } from './load.js';

/** Parent side of bare-fastify-server.ts: unlogged, or logging one access line per request. */
export interface BareFastifyPeer {
  readonly child: BenchChild<{ port: number }>;
  readonly charge: LoadTarget;
  stop(): Promise<void>;
}

/** `accessLogFile`: the route also writes one pino access line per request there, as Tessera does. */
export async function startBareFastifyPeer(options: { tlsFiles: { cert: string; key: string }; bearer: string; cpuList?: string; accessLogFile?: string }): Promise<BareFastifyPeer> {
  const child = await startChild<{ port: number }>('bare-fastify-server.ts', {
    env: { BENCH_TLS_CERT: options.tlsFiles.cert, BENCH_TLS_KEY: options.tlsFiles.key, ...(options.accessLogFile ? { BENCH_FASTIFY_ACCESS_LOG: options.accessLogFile } : {}) },
    ...(options.cpuList !== undefined ? { cpuList: options.cpuList } : {}),
  });
  return {
    child,
    // Byte for byte the request Tessera gets, bearer token included (ignored here).
    charge: {
      url: `https://127.0.0.1:${child.ready.port}/v5/Transaction/charge`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${options.bearer}` },
      body: '{}',
    },
    stop: () => child.stop(),
  };
}
