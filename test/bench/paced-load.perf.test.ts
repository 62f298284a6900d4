import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { load } from './load.js';

let server: http.Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

const urlOf = (listening: http.Server): string => {
  const address = listening.address();
  if (address === null || typeof address === 'string') throw new Error('the server listens on no TCP port');
  return `http://127.0.0.1:${address.port}/`;
};

/** A local server that answers 204 at once, except as `hold` says; it records when each request arrived. */
async function listen(hold: (index: number) => number = () => 0): Promise<{ url: string; arrivals: number[] }> {
  const arrivals: number[] = [];
  server = http.createServer((request, response) => {
    const index = arrivals.push(performance.now()) - 1;
    request.resume();
    request.on('end', () => {
      const ms = hold(index);
      if (ms === 0) response.writeHead(204).end();
      else setTimeout(() => response.writeHead(204).end(), ms);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: urlOf(server), arrivals };
}

describe('a fixed-rate load (overallRate)', () => {
  it('spreads each second evenly: every 100 ms of the run gets about a tenth of the rate', async () => {
    const { url, arrivals } = await listen();
    const result = await load({ url, method: 'GET' }, { seconds: 2, connections: 10, overallRate: 400 });

    // The first 10 open the 10 connections before the clock starts.
    const paced = arrivals.slice(10);
    const first = paced[0]!;
    const buckets = new Array<number>(20).fill(0);
    for (const at of paced) buckets[Math.min(19, Math.floor((at - first) / 100))]! += 1;
    // 40 are due in each 100 ms; sending a second's share as fast as answers come (autocannon's
    // overallRate) puts it all in the first of the ten and leaves the rest empty.
    for (const count of buckets) {
      expect(count).toBeGreaterThanOrEqual(25);
      expect(count).toBeLessThanOrEqual(55);
    }
    expect(result.responses).toBe(800);
    expect(result.reqPerSec).toBe(400);
  });

  it('counts latency from when a request was due, so the requests queued behind a stall are charged for it', async () => {
    // One connection at 100/s: the 50th paced request (the first opened the connection) is held
    // 300 ms, and the 29 due meanwhile wait for it.
    const { url } = await listen((index) => (index === 50 ? 300 : 0));
    const result = await load({ url, method: 'GET' }, { seconds: 2, connections: 1, overallRate: 100 });

    expect(result.responses).toBe(200);
    // Measured from when each went out, only the held one is slow, and p99 (the 2nd slowest of 200) is a few ms.
    expect(result.latencyP99Ms).toBeGreaterThanOrEqual(250);
    expect(result.latencyP99Ms).toBeLessThan(400);
  });

  it('hands each request its own body from setupRequest and each answer to onResponse', async () => {
    const bodies: string[] = [];
    server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        bodies.push(body);
        response.writeHead(200, { 'content-type': 'text/plain' }).end(`echo ${body}`);
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    let next = 0;
    const answers: string[] = [];
    const result = await load(
      {
        url: urlOf(server),
        setupRequest: (request) => ({ ...request, body: `n=${next++}` }),
        onResponse: (status, body) => answers.push(`${status} ${body}`),
      },
      { seconds: 1, connections: 4, overallRate: 50 },
    );

    expect(result.reqPerSec).toBe(50);
    // 50 paced, and 4 that opened the 4 connections first.
    expect([...bodies].sort()).toEqual(Array.from({ length: 54 }, (_, index) => `n=${index}`).sort());
    expect([...answers].sort()).toEqual(bodies.map((body) => `200 echo ${body}`).sort());
  });
});
