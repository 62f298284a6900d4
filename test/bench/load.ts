import autocannon from 'autocannon';
import { pacedLoad, type PacedRequest } from './paced-load.js';

/** One load run against 127.0.0.1 (autocannon; pacedLoad at a fixed rate), reduced to the figures the report uses. */
export interface LoadResult {
  readonly seconds: number;
  readonly connections: number;
  /** Successful (2xx) responses per second over the measured window. */
  readonly reqPerSec: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  readonly responses: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly statusCodes: Record<string, number>;
}

/** A paced request's fields, with the URL in place of the path; setupRequest makes each request (e.g. a fresh refresh token each time). */
export interface LoadTarget extends Omit<PacedRequest, 'method' | 'path'> {
  readonly url: string;
  readonly method?: PacedRequest['method'];
}

export interface LoadOptions {
  readonly seconds: number;
  readonly connections: number;
  /**
   * A fixed offered rate over all connections, req/s, spread evenly over each second (pacedLoad:
   * open loop, latency from when each request was due); unset: as fast as answers come (autocannon).
   */
  readonly overallRate?: number;
}

export async function load(target: LoadTarget, options: LoadOptions): Promise<LoadResult> {
  const url = new URL(target.url);
  if (url.hostname !== '127.0.0.1') throw new Error(`bench traffic goes to 127.0.0.1 only, not ${url.hostname}`);
  const request: PacedRequest = {
    method: target.method ?? 'POST',
    path: url.pathname,
    ...(target.headers ? { headers: target.headers } : {}),
    ...(target.body !== undefined ? { body: target.body } : {}),
    ...(target.setupRequest ? { setupRequest: target.setupRequest } : {}),
    ...(target.onResponse ? { onResponse: target.onResponse } : {}),
  };
  if (options.overallRate !== undefined) {
    const paced = await pacedLoad(url, request, { seconds: options.seconds, connections: options.connections, rate: options.overallRate });
    return {
      seconds: paced.seconds,
      connections: options.connections,
      reqPerSec: paced.ok / paced.seconds,
      latencyP50Ms: paced.latencyP50Ms,
      latencyP99Ms: paced.latencyP99Ms,
      responses: paced.ok + paced.non2xx,
      non2xx: paced.non2xx,
      errors: paced.errors,
      timeouts: paced.timeouts,
      statusCodes: paced.statusCodes,
    };
  }
  const result = await autocannon({
    url: url.origin,
    connections: options.connections,
    duration: options.seconds,
    pipelining: 1,
    timeout: 10,
    requests: [request],
  });
  const ok = result['2xx'];
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;
  return {
    seconds: result.duration,
    connections: options.connections,
    reqPerSec: ok / result.duration,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    responses: ok + result.non2xx,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
  };
}

/** An unmeasured run before a measured one; its result is discarded. */
export async function warmUp(target: LoadTarget, options: LoadOptions): Promise<void> {
  await load(target, options);
}

/** Issues exactly `amount` requests (setup work such as pre-issuing tokens), not a measurement. */
export async function issueAmount(target: LoadTarget, options: { amount: number; connections: number }): Promise<number> {
  const url = new URL(target.url);
  if (url.hostname !== '127.0.0.1') throw new Error(`bench traffic goes to 127.0.0.1 only, not ${url.hostname}`);
  const result = await autocannon({
    url: url.origin,
    connections: options.connections,
    amount: options.amount,
    pipelining: 1,
    timeout: 10,
    requests: [
      {
        method: target.method ?? 'POST',
        path: url.pathname,
        ...(target.headers ? { headers: target.headers } : {}),
        ...(target.body !== undefined ? { body: target.body } : {}),
        ...(target.onResponse ? { onResponse: (status: number, body: string) => target.onResponse?.(status, body) } : {}),
      },
    ],
  });
  return result['2xx'];
}
