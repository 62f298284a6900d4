import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@tessera/config';
import { EgressError, egressPolicy, type Resolve } from './egress-policy.js';

/** The policy as a process builds it, from TESSERA_EGRESS_ALLOW read by @tessera/config. */
const policyWith = (allow?: string, resolve?: Resolve) => egressPolicy(loadConfig(allow === undefined ? {} : { TESSERA_EGRESS_ALLOW: allow }), resolve ? { resolve } : {});

/** A resolver answering from a table, as a DNS server an attacker runs would. */
const resolvingTo =
  (table: Record<string, readonly string[]>): Resolve =>
  async (hostname) =>
    (table[hostname] ?? []).map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('egress policy: refused ranges', () => {
  const policy = policyWith();

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['169.254.169.254', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.254', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    // IPv4-mapped IPv6: refused as the IPv4 address it reaches.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['::ffff:100.64.0.1', 'carrierGradeNat'],
    // NAT64 and other IPv6 outside global unicast could lead back to a private IPv4 address.
    ['64:ff9b::a00:1', 'rfc6052'],
    ['::7f00:1', 'reserved'],
  ])('%s is refused (%s)', (address, range) => {
    expect(policy.refusalOf(address)).toBe(range);
  });

  it.each(['93.184.215.14', '1.1.1.1', '100.63.255.255', '172.32.0.1', '2606:4700:4700::1111', '::ffff:93.184.215.14'])('%s, a public address, may be reached', (address) => {
    expect(policy.refusalOf(address)).toBeUndefined();
  });

  it('a URL naming a refused address is refused before any connection', async () => {
    for (const url of ['https://127.0.0.1/jwks', 'https://[::1]/jwks', 'https://[::ffff:127.0.0.1]/jwks', 'https://169.254.169.254/latest/meta-data', 'https://0x7f000001/jwks']) {
      await expect(policy.fetch(url, { maxBytes: 100, timeoutMs: 1000 }), url).rejects.toMatchObject({ reason: 'refused' });
    }
  });

  it('plain http and a URL with credentials are refused', async () => {
    await expect(policy.fetch('http://93.184.215.14/jwks', { maxBytes: 100, timeoutMs: 1000 })).rejects.toMatchObject({ reason: 'refused' });
    await expect(policy.fetch('https://user:pass@93.184.215.14/jwks', { maxBytes: 100, timeoutMs: 1000 })).rejects.toMatchObject({ reason: 'invalid-url' });
  });
});

describe('egress policy: a hostname is checked by what it resolves to', () => {
  const table = {
    'rebind.example.test': ['127.0.0.1'],
    'metadata.example.test': ['169.254.169.254'],
    'mixed.example.test': ['93.184.215.14', '10.0.0.5'],
    'mapped.example.test': ['::ffff:192.168.0.1'],
    'public.example.test': ['93.184.215.14', '2606:4700:4700::1111'],
  };

  /** The lookup as node:net calls it: with all: true when it may try several addresses. */
  const lookedUp = (policy: ReturnType<typeof policyWith>, hostname: string, all: boolean) =>
    new Promise<string | LookupAddress[]>((resolve, reject) => policy.lookup(hostname, { all }, (error, address) => (error ? reject(error) : resolve(address))));

  it('refuses a hostname resolving to a private, loopback, link-local or mapped address, even one among public ones', async () => {
    const policy = policyWith(undefined, resolvingTo(table));
    for (const hostname of ['rebind.example.test', 'metadata.example.test', 'mixed.example.test', 'mapped.example.test']) {
      await expect(lookedUp(policy, hostname, true), hostname).rejects.toBeInstanceOf(EgressError);
      await expect(lookedUp(policy, hostname, false), hostname).rejects.toMatchObject({ reason: 'refused' });
      await expect(policy.fetch(`https://${hostname}/jwks`, { maxBytes: 100, timeoutMs: 1000 }), hostname).rejects.toMatchObject({ reason: 'refused' });
    }
  });

  it('hands the socket exactly the addresses it checked', async () => {
    const policy = policyWith(undefined, resolvingTo(table));
    expect(await lookedUp(policy, 'public.example.test', true)).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:4700:4700::1111', family: 6 },
    ]);
    expect(await lookedUp(policy, 'public.example.test', false)).toBe('93.184.215.14');
  });

  it('allows by hostname, by address and by CIDR range, and nothing beside them', async () => {
    const byHostname = policyWith('rebind.example.test', resolvingTo(table));
    expect(await lookedUp(byHostname, 'rebind.example.test', false)).toBe('127.0.0.1');
    expect(byHostname.allowsPlainHttp(new URL('http://Rebind.Example.Test:8080/jwks'))).toBe(true);
    await expect(lookedUp(byHostname, 'metadata.example.test', false)).rejects.toMatchObject({ reason: 'refused' });

    const byAddress = policyWith('127.0.0.1', resolvingTo(table));
    expect(await lookedUp(byAddress, 'rebind.example.test', false)).toBe('127.0.0.1');
    expect(byAddress.refusalOf('::ffff:127.0.0.1')).toBeUndefined();
    expect(byAddress.refusalOf('127.0.0.2')).toBe('loopback');
    expect(byAddress.allowsPlainHttp(new URL('http://127.0.0.1:8080/jwks'))).toBe(true);
    // The address allows what resolves to it, not plain http to a hostname.
    expect(byAddress.allowsPlainHttp(new URL('http://rebind.example.test/jwks'))).toBe(false);

    const byRange = policyWith('10.0.0.0/8,fc00::/7', resolvingTo(table));
    expect(byRange.refusalOf('10.200.0.1')).toBeUndefined();
    expect(byRange.refusalOf('fd00::1')).toBeUndefined();
    expect(byRange.refusalOf('192.168.0.1')).toBe('private');
    expect(await lookedUp(byRange, 'mixed.example.test', true)).toHaveLength(2);
    await expect(lookedUp(byRange, 'mapped.example.test', true)).rejects.toMatchObject({ reason: 'refused' });
  });
});

describe('egress policy: bounded requests to an allowed local server', () => {
  let server: Server;
  let base: string;
  let hits = 0;
  beforeAll(async () => {
    server = createServer((request, response) => {
      hits += 1;
      if (request.url === '/big') return response.end('x'.repeat(5000));
      if (request.url === '/stream') {
        // No Content-Length: the bound is kept while reading, not from the header.
        response.write('x'.repeat(800));
        response.write('x'.repeat(800));
        return response.end();
      }
      if (request.url === '/slow') return setTimeout(() => response.end('late'), 2000);
      response.setHeader('content-type', 'application/json');
      return response.end('{"keys":[]}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('is refused by default: the server is on loopback, and never hears of it', async () => {
    const before = hits;
    await expect(policyWith().fetch(`${base}/jwks`, { maxBytes: 1000, timeoutMs: 1000 })).rejects.toMatchObject({ reason: 'refused' });
    await expect(policyWith('localhost').fetch(`${base.replace('http', 'https')}/jwks`, { maxBytes: 1000, timeoutMs: 1000 })).rejects.toMatchObject({ reason: 'refused' });
    expect(hits).toBe(before);
  });

  it('answers within the bounds when the allow list names the server, by address or by hostname', async () => {
    const answer = await policyWith('127.0.0.1').fetch(`${base}/jwks`, { maxBytes: 1000, timeoutMs: 1000 });
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe('{"keys":[]}');
    const byName = await policyWith('localhost').fetch(`${base.replace('127.0.0.1', 'localhost')}/jwks`, { maxBytes: 1000, timeoutMs: 1000 });
    expect(byName.status).toBe(200);
  });

  it('drops an answer over the size bound, declared or streamed, and one past the time bound', async () => {
    const policy = policyWith('127.0.0.1');
    await expect(policy.fetch(`${base}/big`, { maxBytes: 1000, timeoutMs: 1000 })).rejects.toMatchObject({ reason: 'too-large' });
    await expect(policy.fetch(`${base}/stream`, { maxBytes: 1000, timeoutMs: 1000 })).rejects.toMatchObject({ reason: 'too-large' });
    const started = performance.now();
    await expect(policy.fetch(`${base}/slow`, { maxBytes: 1000, timeoutMs: 200 })).rejects.toMatchObject({ reason: 'timeout' });
    expect(performance.now() - started).toBeLessThan(1500);
  });
});
