import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Answer, KeepAliveClient } from './keep-alive-client.js';

/**
 * The history of every client operation of a run, in the format test/sim/linearizability checks
 * (its README, "History format"): get, refresh, revoke and charge with their call and return
 * times and answers, the revocations seen applied in a region, and the spans a region was
 * isolated. Times are nanoseconds since the recorder was made, on one monotonic clock.
 */
export interface HistoryLine {
  readonly id: number;
  readonly client: number;
  readonly region: string;
  readonly family?: string;
  readonly op: 'get' | 'refresh' | 'revoke' | 'charge' | 'applied' | 'isolated';
  readonly generation?: number;
  readonly forged?: boolean;
  readonly status?: number;
  readonly new_generation?: number;
  readonly call: number;
  readonly return: number;
}

/** An answer, with when it was asked for and when it came (the recorder's clock). */
export type TimedAnswer = Answer & { readonly calledAt: number; readonly returnedAt: number };

interface Held {
  readonly family: string;
  readonly generation: number;
}

const claimsOf = (token: string): { fid?: string; gen?: number } | undefined => {
  try {
    return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { fid?: string; gen?: number };
  } catch {
    return undefined;
  }
};
/** `tsr_<familyId>.<secret>`: the family a refresh token names, whatever its secret. */
const familyOfRefreshToken = (token: string) => /^tsr_([^.]+)\./.exec(token)?.[1];

export class HistoryRecorder {
  readonly #started = process.hrtime.bigint();
  readonly #lines: HistoryLine[] = [];
  readonly #refreshTokens = new Map<string, Held>();
  readonly #issued = new Set<string>();
  readonly #applied = new Set<string>();
  #clients = 0;

  /** Nanoseconds since the recorder was made. */
  now(): number {
    return Number(process.hrtime.bigint() - this.#started);
  }

  /** A client id of its own, for each simulated client (porcupine draws a row per client). */
  newClient(): number {
    this.#clients += 1;
    return this.#clients;
  }

  get operations(): number {
    return this.#lines.filter((line) => line.op !== 'isolated').length;
  }

  /** Families issued so far, by home region. */
  familiesOf(region: string): number {
    return [...this.#issued].filter((family) => family.startsWith(`${region}_`)).length;
  }

  private push(line: Omit<HistoryLine, 'id'>): void {
    this.#lines.push({ id: this.#lines.length + 1, ...line });
  }

  /**
   * One HTTP exchange with `region`, classified by its route: get-oauth-token answered 200,
   * refresh, revoke, and every bearer check (forward-auth, the charge route) of a v5 token whose
   * family was issued in this run. Anything else (a failed get, JWKS, an unknown family) is not a
   * client operation of the model and is left out.
   */
  exchange(client: number, region: string, path: string, request: { readonly body?: string; readonly headers?: Record<string, string> }, answer: { status: number; text: string }, call: number, ret: number): void {
    const route = path.split('?')[0];
    if (route === '/v5/Authorization/get-oauth-token') {
      if (answer.status !== 200) return;
      const pair = JSON.parse(answer.text) as { token: string; refresh_token: string };
      const family = claimsOf(pair.token)?.fid;
      if (family === undefined) return;
      this.#issued.add(family);
      this.#refreshTokens.set(pair.refresh_token, { family, generation: 0 });
      this.push({ client, region: family.split('_')[0]!, family, op: 'get', status: 200, call, return: ret });
      return;
    }
    if (route === '/v5/Authorization/refresh-oauth-token' || route === '/v5/Authorization/revoke-oauth-token') {
      const presented = (JSON.parse(request.body ?? '{}') as { refresh_token?: string }).refresh_token ?? '';
      const held = this.#refreshTokens.get(presented);
      const family = held?.family ?? familyOfRefreshToken(presented);
      if (family === undefined || !this.#issued.has(family)) return;
      const op = route.endsWith('refresh-oauth-token') ? 'refresh' : 'revoke';
      const token = held === undefined ? { forged: true } : { generation: held.generation };
      if (op === 'refresh' && answer.status === 200) {
        const pair = JSON.parse(answer.text) as { token: string; refresh_token: string };
        const generation = claimsOf(pair.token)?.gen ?? -1;
        this.#refreshTokens.set(pair.refresh_token, { family, generation });
        this.push({ client, region, family, op, ...token, status: 200, new_generation: generation, call, return: ret });
        return;
      }
      this.push({ client, region, family, op, ...token, status: answer.status, call, return: ret });
      return;
    }
    const authorization = request.headers?.authorization ?? request.headers?.Authorization;
    if (authorization === undefined || !(route === '/forward-auth' || route === '/v5/Transaction/charge')) return;
    const claims = claimsOf(authorization.replace(/^Bearer /i, ''));
    if (claims?.fid === undefined || claims.gen === undefined || !this.#issued.has(claims.fid)) return;
    this.push({ client, region, family: claims.fid, op: 'charge', generation: claims.gen, status: answer.status, call, return: ret });
  }

  /**
   * A revocation of `family` seen in effect in `region` (a probe's first 401 there, whose own call
   * and return are given). Only once per family and region; the caller vouches that nothing but a
   * revocation could have refused the token (the family's newest generation, revoked).
   */
  applied(region: string, token: string, call: number, ret: number): void {
    const family = claimsOf(token)?.fid;
    if (family === undefined || !this.#issued.has(family) || this.#applied.has(`${family} ${region}`)) return;
    this.#applied.add(`${family} ${region}`);
    this.push({ client: 0, region, family, op: 'applied', call, return: ret });
  }

  /** The run cut `region` off from every other region for the whole of [from, to]. */
  isolated(region: string, from: number, to: number): void {
    this.push({ client: 0, region, op: 'isolated', call: from, return: to });
  }

  write(file: string): void {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, this.#lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
  }
}

/**
 * A region's HTTPS client whose every exchange is recorded as the operation of one simulated
 * client; an exchange that gets no answer is recorded with status 0, then fails as before.
 */
export function recordingClient(inner: KeepAliveClient, region: string, recorder: HistoryRecorder, client = recorder.newClient()) {
  async function send(path: string, options: Parameters<KeepAliveClient['send']>[1] = {}): Promise<TimedAnswer> {
    const call = recorder.now();
    let answer: Answer;
    try {
      answer = await inner.send(path, options);
    } catch (error) {
      recorder.exchange(client, region, path, options, { status: 0, text: '' }, call, recorder.now());
      throw error;
    }
    const ret = recorder.now();
    recorder.exchange(client, region, path, options, answer, call, ret);
    return { ...answer, calledAt: call, returnedAt: ret };
  }
  return {
    origin: inner.origin,
    region,
    send,
    postJson: (path: string, body: unknown, localAddress?: string) =>
      send(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...(localAddress ? { localAddress } : {}) }),
    /** The same region, recorded as another client (each concurrent client needs its own row). */
    asClient: (other: number) => recordingClient(inner, region, recorder, other),
  };
}

export type RecordingClient = ReturnType<typeof recordingClient>;
