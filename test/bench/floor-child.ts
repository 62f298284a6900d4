/**
 * Child process: the floor of a durable issuance on this machine, each part
 * measured alone, pinned where the server under test runs. Prints one JSON line.
 *
 * BENCH_FLOOR=tls     a bare node:https server (same certificate and key) answering every POST
 *                     with a body the size of a get-oauth-token answer; prints its port and
 *                     serves until SIGTERM. The parent loads it like any peer.
 * BENCH_FLOOR=sign    Tessera's own signAccessToken with a fresh P-256 key over claims shaped like
 *                     an issued token's; µs per signature (wall and CPU; one thread, so equal).
 * BENCH_FLOOR=commit  Tessera's SqliteEventStore on a new file in the temp folder (WAL,
 *                     synchronous=FULL, group commit on its writer thread): groups of
 *                     BENCH_GROUP_SIZE appends made in one tick, each a TokenIssued event to a
 *                     new stream, copied from BENCH_EVENT_TEMPLATE; µs per commit and per event,
 *                     wall and process CPU.
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TokenIssued } from '@tessera/contracts';
import { SqliteEventStore } from '@tessera/event-store-sqlite';
import { generateSigningKey, newFamilyId, newJti, signAccessToken, signingKeyFromJwk } from '@tessera/tokens';

const mode = process.env.BENCH_FLOOR;
const seconds = Number(process.env.BENCH_FLOOR_SECONDS ?? 3);
const cpuNow = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

if (mode === 'tls') {
  const answer = Buffer.from(process.env.BENCH_TLS_BODY ?? '{}');
  const server = createServer({ cert: readFileSync(process.env.BENCH_TLS_CERT ?? ''), key: readFileSync(process.env.BENCH_TLS_KEY ?? '') }, (request, response) => {
    // Read the request body as any server must, then answer the same bytes every time.
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': answer.length, 'cache-control': 'no-store' });
      response.end(answer);
    });
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
} else if (mode === 'sign') {
  const { kid, privateJwk } = await generateSigningKey();
  const key = signingKeyFromJwk(kid, privateJwk);
  const claims = () => ({
    iss: 'https://127.0.0.1:8443',
    sub: '6f1c2e4a-0a4b-4b8e-9a53-2d1f0c9e7b11',
    aud: 'tessera:v5',
    client_id: 'tsl_AbCdEfGhIjKl',
    iat: 1_795_000_000,
    exp: 1_795_000_900,
    jti: newJti(),
    scope: 'transaction:charge',
    fid: newFamilyId(),
    gen: 0,
  });
  // Warm-up: JIT and OpenSSL's key setup.
  for (let i = 0; i < 2000; i += 1) signAccessToken(claims(), key);
  let count = 0;
  const cpuStart = cpuNow();
  const start = performance.now();
  const until = start + seconds * 1000;
  while (performance.now() < until) {
    for (let i = 0; i < 200; i += 1) signAccessToken(claims(), key);
    count += 200;
  }
  const wallMicros = ((performance.now() - start) * 1000) / count;
  process.stdout.write(`${JSON.stringify({ signatures: count, wallMicrosPerSign: wallMicros, cpuMicrosPerSign: ((cpuNow() - cpuStart) * 1e6) / count })}\n`);
} else if (mode === 'commit') {
  const groupSize = Number(process.env.BENCH_GROUP_SIZE ?? 16);
  const template = JSON.parse(process.env.BENCH_EVENT_TEMPLATE ?? 'null') as { event: TokenIssued; metadata: Record<string, string> } | null;
  if (!template) throw new Error('BENCH_EVENT_TEMPLATE: a TokenIssued event and its metadata, as JSON');
  const dir = mkdtempSync(join(tmpdir(), 'tessera-floor-'));
  const store = new SqliteEventStore({ file: join(dir, 'events.db') });
  const appendGroup = () =>
    Promise.all(
      Array.from({ length: groupSize }, () => {
        const familyId = newFamilyId();
        const event: TokenIssued = { ...template.event, familyId, jti: newJti() };
        return store.append(`tokenfamily-${familyId}`, [{ event, metadata: template.metadata }], { expectedRevision: 'no_stream' });
      }),
    );
  try {
    for (let i = 0; i < 50; i += 1) await appendGroup();
    let commits = 0;
    const cpuStart = cpuNow();
    const start = performance.now();
    const until = start + seconds * 1000;
    while (performance.now() < until) {
      await appendGroup();
      commits += 1;
    }
    const wallMs = performance.now() - start;
    const cpuSeconds = cpuNow() - cpuStart;
    process.stdout.write(
      `${JSON.stringify({
        groupSize,
        commits,
        wallMicrosPerCommit: (wallMs * 1000) / commits,
        wallMicrosPerEvent: (wallMs * 1000) / (commits * groupSize),
        cpuMicrosPerEvent: (cpuSeconds * 1e6) / (commits * groupSize),
      })}\n`,
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
} else {
  throw new Error(`BENCH_FLOOR must be tls, sign or commit, got ${String(mode)}`);
}
