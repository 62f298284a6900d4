import http, { type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import type autocannon from 'autocannon';

/** What one request of a paced run is: autocannon's shape, so a target serves both generators. */
export interface PacedRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  readonly setupRequest?: (request: autocannon.Request) => autocannon.Request;
  readonly onResponse?: (status: number, body: string) => void;
}

export interface PacedOptions {
  readonly seconds: number;
  readonly connections: number;
  /** Requests per second over all connections, spread evenly over each second. */
  readonly rate: number;
  /** How long a request may take before it counts as a timeout; autocannon's 10 s by default. */
  readonly timeoutMs?: number;
}

type Outcome = { readonly status: number } | 'error' | 'timeout';

export interface PacedResult {
  readonly seconds: number;
  readonly ok: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly statusCodes: Record<string, number>;
  /** From the instant each request was due, not when a free connection took it. */
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
}

/**
 * An open-loop load at a fixed rate: request i is due at start + i / rate, whatever happened to
 * the ones before it, and goes out on the first free of `connections` keep-alive connections
 * (one request at a time on each, as autocannon runs them). Its latency counts from when it was
 * due, so a server that stalls is charged for every request that waited behind the stall, not
 * only for the one it held.
 *
 * autocannon's `overallRate` is not this: each connection sends as fast as answers come until it
 * has made its share of the second, then waits for the next second. At 70% of the maximum that is
 * full load for 0.7 s and nothing for 0.3 s, so a "fixed-rate" p99 or event-loop delay was the
 * one of full load, and a fixed-rate CPU figure the one of bursts.
 */
export async function pacedLoad(origin: URL, request: PacedRequest, options: PacedOptions): Promise<PacedResult> {
  const secure = origin.protocol === 'https:';
  // The bench's servers use its own self-signed certificate, on 127.0.0.1 only (load.ts checks);
  // autocannon does not check it either. fifo: each request takes the connection idle longest, so
  // every connection stays in use, as autocannon's do, and none sits idle until the server closes it.
  const pool = { keepAlive: true, maxSockets: options.connections, scheduling: 'fifo' } as const;
  const agent = secure ? new https.Agent({ ...pool, rejectUnauthorized: false }) : new http.Agent(pool);
  const send = secure ? https.request : http.request;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const total = Math.round(options.rate * options.seconds);
  const intervalMs = 1000 / options.rate;
  const latencies = new Float64Array(total);
  const statusCodes: Record<string, number> = {};
  let answered = 0;
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let timeouts = 0;

  const base: autocannon.Request = {
    method: request.method,
    path: request.path,
    ...(request.headers ? { headers: request.headers } : {}),
    ...(request.body !== undefined ? { body: request.body } : {}),
  };

  /** Sends one request; resolves with how it ended, once: answered, failed, or timed out. */
  const one = (): Promise<Outcome> =>
    new Promise((resolve) => {
      // setupRequest gets its own copy, as autocannon gives it, so what it changes stays with one request.
      const made = request.setupRequest ? request.setupRequest({ ...base, ...(request.headers ? { headers: { ...request.headers } } : {}) }) : base;
      const body = made.body;
      const headers: OutgoingHttpHeaders = { ...made.headers };
      if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
      const outgoing = send({ host: origin.hostname, port: origin.port, method: made.method ?? request.method, path: made.path ?? request.path, headers, agent }, (response) => {
        const chunks: Buffer[] = [];
        if (request.onResponse) response.on('data', (chunk: Buffer) => chunks.push(chunk));
        else response.resume();
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          request.onResponse?.(status, Buffer.concat(chunks).toString('utf8'));
          resolve({ status });
        });
        response.on('error', () => resolve('error'));
      });
      outgoing.setTimeout(timeoutMs, () => {
        resolve('timeout');
        outgoing.destroy();
      });
      outgoing.on('error', () => resolve('error'));
      outgoing.end(body);
    });

  const measure = async (dueAt: number) => {
    const outcome = await one();
    if (outcome === 'timeout') timeouts += 1;
    else if (outcome === 'error') errors += 1;
    else {
      latencies[answered] = performance.now() - dueAt;
      answered += 1;
      statusCodes[outcome.status] = (statusCodes[outcome.status] ?? 0) + 1;
      if (outcome.status >= 200 && outcome.status < 300) ok += 1;
      else non2xx += 1;
    }
  };

  // Every connection is opened (TLS handshake included) before the clock starts, as autocannon
  // connects before it sends; opened on the way, they charged the first requests 50–130 ms.
  await Promise.all(Array.from({ length: options.connections }, one));

  const started = performance.now();
  const pending: Promise<void>[] = [];
  await new Promise<void>((finish) => {
    const tick = () => {
      // Every request now due goes out, so a late timer does not lower the rate.
      const due = Math.min(total, Math.floor((performance.now() - started) / intervalMs) + 1);
      while (pending.length < due) pending.push(measure(started + pending.length * intervalMs));
      if (pending.length >= total) return finish();
      setTimeout(tick, Math.max(0, started + pending.length * intervalMs - performance.now()));
    };
    tick();
  });
  await Promise.all(pending);
  agent.destroy();

  const measured = latencies.subarray(0, answered).sort();
  // To 0.01 ms, as a report prints it.
  const percentile = (p: number) => (answered === 0 ? Number.NaN : Math.round(measured[Math.min(answered - 1, Math.ceil((p / 100) * answered) - 1)]! * 100) / 100);
  return {
    seconds: options.seconds,
    ok,
    non2xx,
    errors,
    timeouts,
    statusCodes,
    latencyP50Ms: percentile(50),
    latencyP99Ms: percentile(99),
  };
}
