import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type * as KafkaBroker from '../../infra/kafka/kafka-broker.js';

/**
 * The harness's own promise: a port it picked and something else took before the server bound it
 * costs a restart on new ports, not a failed test; a port the test named is the test's failure.
 * The first port freePort hands out is one this file already listens on, as another test's
 * server would: it accepts the readiness probe's connection and never answers, so the harness
 * must give up on a silent probe to notice that its server exited.
 */
const held = vi.hoisted(() => ({ port: 0, handedOut: 0 }));
vi.mock('../../infra/kafka/kafka-broker.js', async (importActual) => {
  const actual = await importActual<typeof KafkaBroker>();
  return {
    ...actual,
    freePort: async () => {
      held.handedOut += 1;
      return held.handedOut === 1 ? held.port : actual.freePort();
    },
  };
});
const { startTessera } = await import('../support/tessera-process.js');

let occupier: Server;
const accepted = new Set<Socket>();
beforeAll(async () => {
  occupier = createServer((socket) => accepted.add(socket));
  await new Promise<void>((listening) => occupier.listen(0, '127.0.0.1', listening));
  held.port = (occupier.address() as { port: number }).port; // a TCP server's address is an AddressInfo
});
afterAll(async () => {
  for (const socket of accepted) socket.destroy();
  await new Promise<void>((closed) => occupier.close(() => closed()));
});

describe('startTessera', () => {
  it('starts again on new ports when a port it picked is taken, and the server answers on the new one', async () => {
    const tessera = await startTessera();
    try {
      expect(held.handedOut).toBeGreaterThanOrEqual(3);
      expect(accepted.size).toBeGreaterThan(0);
      expect(new URL(tessera.baseUrl).port).not.toBe(String(held.port));
      expect((await tessera.request('/readyz')).status).toBe(200);
    } finally {
      await tessera.stop();
    }
  });

  it('fails with the server\'s own message when the test named the taken port', async () => {
    await expect(startTessera({ TESSERA_PORT: String(held.port) })).rejects.toThrow(/exited during start[\s\S]*EADDRINUSE/);
  });
});
