import { lookup as systemLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { TesseraConfig } from '@tessera/config';
import { EgressAllowList, parsedAddress, refusedRange } from './address-ranges.js';

/** Why an outbound request did not get its answer; `refused` is the policy's own refusal. */
export type EgressFailure = 'invalid-url' | 'refused' | 'timeout' | 'too-large' | 'network';

/**
 * An outbound request that failed. The message names the host and the reason for the operator's
 * log; it never holds the URL's path or query (they may carry a token a client put there).
 */
export class EgressError extends Error {
  constructor(
    readonly reason: EgressFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'EgressError';
  }
}

export interface EgressRequest {
  /** Bytes of body read at most: past it the response is dropped (`too-large`), not read on. */
  readonly maxBytes: number;
  /** Milliseconds from the lookup to the last byte of the body: past it the request is dropped (`timeout`). */
  readonly timeoutMs: number;
  readonly method?: 'GET' | 'POST' | undefined;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly body?: string | Buffer | undefined;
}

export interface EgressResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** The addresses a hostname resolves to; dns.lookup (getaddrinfo: hosts file, then DNS) unless a test gives its own. */
export type Resolve = (hostname: string) => Promise<readonly LookupAddress[]>;

export interface EgressPolicy {
  /**
   * The URL may be reached over plain http: its host is named in TESSERA_EGRESS_ALLOW (a test's or
   * a developer's local server). Every other URL must be https.
   */
  allowsPlainHttp(url: URL): boolean;
  /** Why the policy refuses this address (the range's name), or undefined when it may be reached. */
  refusalOf(address: string): string | undefined;
  /**
   * A `lookup` for node:net, node:http and node:https (and undici's `connect`): it resolves every
   * address of the host, refuses the connection if any of them is refused, and hands over exactly
   * the addresses it checked, so the socket connects to what was checked (no second resolution a
   * DNS rebinding could answer differently).
   */
  readonly lookup: LookupFunction;
  /**
   * One bounded request: no redirect followed, the body read up to `maxBytes`, the whole exchange
   * within `timeoutMs`. Any answer comes back whatever its status; a failure is an EgressError.
   */
  fetch(url: string, request: EgressRequest): Promise<EgressResponse>;
}

/**
 * The one egress policy of a process, from TESSERA_EGRESS_ALLOW. Every request to a URL a user
 * registered (a client's JWKS, later a Shared Signals push) goes through it, so a URL cannot point
 * Tessera at its own loopback, the cloud's metadata address or the private network behind it.
 */
export function egressPolicy(config: Pick<TesseraConfig, 'TESSERA_EGRESS_ALLOW'>, options: { readonly resolve?: Resolve } = {}): EgressPolicy {
  const allow = new EgressAllowList(config.TESSERA_EGRESS_ALLOW ?? []);
  const resolve = options.resolve ?? ((hostname: string) => systemLookup(hostname, { all: true, verbatim: true }));

  function refusalOf(address: string): string | undefined {
    const parsed = parsedAddress(address);
    if (!parsed) return 'not an IP address';
    if (allow.holds(parsed)) return undefined;
    return refusedRange(parsed);
  }

  /** The addresses of `hostname` the policy lets a socket reach, or the refusal of the first it does not. */
  async function checkedAddresses(hostname: string): Promise<LookupAddress[]> {
    const resolved = await resolve(hostname);
    if (resolved.length === 0) throw new EgressError('network', `${hostname} resolves to no address`);
    // A hostname named in the list is trusted whatever it resolves to (`localhost` for a test).
    if (allow.namesHost(hostname)) return [...resolved];
    for (const { address } of resolved) {
      const range = refusalOf(address);
      // One refused address refuses the host: which address a connection picks is not ours to choose.
      if (range !== undefined) throw new EgressError('refused', `${hostname} resolves to a refused address (${address}: ${range})`);
    }
    return [...resolved];
  }

  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    checkedAddresses(hostname).then(
      (addresses) => {
        const family = lookupOptions.family === 'IPv4' ? 4 : lookupOptions.family === 'IPv6' ? 6 : (lookupOptions.family ?? 0);
        const usable = family === 0 ? addresses : addresses.filter((address) => address.family === family);
        const [first] = usable;
        if (first === undefined) return callback(new EgressError('network', `${hostname} has no IPv${family} address`), '');
        if (lookupOptions.all) return callback(null, usable);
        return callback(null, first.address, first.family);
      },
      (error: unknown) => callback(error instanceof EgressError ? error : new EgressError('network', `${hostname} does not resolve`, { cause: error }), ''),
    );
  };

  function allowsPlainHttp(url: URL): boolean {
    return allow.namesHost(url.hostname);
  }

  async function fetch(url: string, request: EgressRequest): Promise<EgressResponse> {
    const target = targetOf(url);
    if (target.protocol !== 'https:' && !(target.protocol === 'http:' && allowsPlainHttp(target))) {
      throw new EgressError('refused', `${target.protocol}//${target.host}: only https is reached, unless TESSERA_EGRESS_ALLOW names the host`);
    }
    // An address in the URL is connected to without a lookup: checked here instead.
    const literal = parsedAddress(target.hostname);
    if (literal) {
      const range = refusalOf(target.hostname);
      if (range !== undefined) throw new EgressError('refused', `${target.host} is a refused address (${range})`);
    }
    return exchange(target, request, lookup);
  }

  return { allowsPlainHttp, refusalOf, lookup, fetch };
}

function targetOf(url: string): URL {
  if (!URL.canParse(url)) throw new EgressError('invalid-url', 'not a URL');
  const target = new URL(url);
  if (target.username !== '' || target.password !== '') throw new EgressError('invalid-url', `${target.host}: a URL with credentials in it is not reached`);
  return target;
}

function exchange(target: URL, request: EgressRequest, lookup: LookupFunction): Promise<EgressResponse> {
  return new Promise((resolve, reject) => {
    const where = `${target.protocol}//${target.host}`;
    let response: IncomingMessage | undefined;
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const fail = (error: EgressError) =>
      settle(() => {
        // Dropped, not drained: nothing more is read from a peer that broke a bound.
        response?.destroy();
        outgoing.destroy();
        reject(error);
      });
    const timer = setTimeout(() => fail(new EgressError('timeout', `${where} did not answer within ${request.timeoutMs} ms`)), request.timeoutMs);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    // agent false: a connection of its own, closed after the answer, so no pooled socket outlives
    // the lookup that checked its address.
    const outgoing = send(target, { method: request.method ?? 'GET', headers: { 'user-agent': 'tessera', ...request.headers }, lookup, agent: false });
    outgoing.on('error', (error) => fail(error instanceof EgressError ? error : new EgressError('network', `${where}: ${codeOf(error)}`, { cause: error })));
    outgoing.on('response', (incoming) => {
      response = incoming;
      const declared = Number(incoming.headers['content-length']);
      if (Number.isFinite(declared) && declared > request.maxBytes) return fail(tooLarge(where, request.maxBytes));
      const chunks: Buffer[] = [];
      let size = 0;
      incoming.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > request.maxBytes) return fail(tooLarge(where, request.maxBytes));
        chunks.push(chunk);
      });
      incoming.on('error', (error) => fail(new EgressError('network', `${where}: ${codeOf(error)}`, { cause: error })));
      incoming.on('aborted', () => fail(new EgressError('network', `${where}: the answer was cut off`)));
      incoming.on('end', () => settle(() => resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: Buffer.concat(chunks) })));
    });
    outgoing.end(request.body);
  });
}

const tooLarge = (where: string, maxBytes: number) => new EgressError('too-large', `${where}: the answer is larger than ${maxBytes} bytes`);

/** Node's network errors carry a code (ECONNREFUSED, ENOTFOUND, CERT_HAS_EXPIRED): it says why without a stack. */
const codeOf = (error: Error) => (error as NodeJS.ErrnoException).code ?? error.message;
