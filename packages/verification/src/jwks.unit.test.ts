import { createServer, type Server } from 'node:http';
import { generateSigningKey, publicPart, PublicKeySet } from '@tessera/tokens';
import { afterEach, describe, expect, it } from 'vitest';
import { loadJwks } from './jwks.js';

/** An issuer's JWKS endpoint on a real socket, answering `body` as JSON. */
let server: Server | undefined;
async function serve(body: string): Promise<string> {
  server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(body));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the test server has no TCP port');
  return `http://127.0.0.1:${address.port}/.well-known/jwks.json`;
}
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

describe('loadJwks', () => {
  it('takes the P-256 keys with an id and passes over the others', async () => {
    const { kid, privateJwk } = await generateSigningKey();
    const p256 = { ...publicPart(privateJwk), kid, alg: 'ES256', use: 'sig' };
    const others = [
      { kty: 'RSA', kid: 'rsa-1', n: 'AQAB', e: 'AQAB' },
      { ...publicPart(privateJwk), kid: 'p384', crv: 'P-384' },
      { ...publicPart(privateJwk) },
      null,
      'not a key',
    ];
    const keys = new PublicKeySet();
    await loadJwks(await serve(JSON.stringify({ keys: [...others, p256] })), keys, { now: () => 1_000_000 });
    expect(keys.jwks(1_000).keys.map((key) => key.kid)).toEqual([kid]);
    expect(keys.find(kid, 1_000)?.publicJwk).toEqual(publicPart(privateJwk));
  });

  it('loads nothing from a key set with no keys listed', async () => {
    const keys = new PublicKeySet();
    await loadJwks(await serve('{}'), keys);
    expect(keys.jwks(1_000).keys).toEqual([]);
  });

  it('refuses an answer that is not a key set, naming where it came from', async () => {
    const url = await serve('[{"kty":"EC"}]');
    await expect(loadJwks(url, new PublicKeySet())).rejects.toThrow(`the issuer's JWKS from ${url} is not a key set`);
  });
});
