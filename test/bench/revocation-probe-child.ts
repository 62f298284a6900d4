/**
 * Child process: the prober of the revocation propagation bench (revocation-propagation.ts), in a
 * process of its own so that its pollers (one request every `pollMs` per revocation in flight)
 * neither saturate nor delay the bench's watcher and timestamps, and can be pinned apart from the
 * servers they measure.
 *
 * Reads from stdin one JSON object: the pre-issued pairs (tokens go through a pipe, never the
 * environment or a file). Then, BENCH_PROBE_PARALLEL at a time, revokes a pair at the home
 * all-in-one and polls the remote verifier with its access token until it answers 401. Prints one
 * JSON line: each sample's family and the epoch times (sub-millisecond) of the revoke's answer and
 * of the first 401, warm-up revocations left out.
 *
 * BENCH_HOME_URL, BENCH_HOME_CA        the home all-in-one and its certificate file
 * BENCH_REMOTE_URL, BENCH_REMOTE_CA    the verifier fed by Kafka and its certificate file
 * BENCH_PROBE_PARALLEL                 revocations in flight
 * BENCH_PROBE_WARMUP                   revocations first sent through untimed
 * BENCH_PROBE_POLL_MS                  pause between two polls of one revocation
 * BENCH_PROBE                          keep-alive (one connection per worker) or new-connection (a TLS handshake per poll)
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { processRunQueueWaitSeconds } from './cpu-time.js';
import { allowedCpus } from './pinning.js';
import { epochNow, familyOf, type ProbeSample, type ProbeResult } from './revocation-probe.js';

interface IssuedPair {
  readonly token: string;
  readonly refresh_token: string;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

const parallel = Number(required('BENCH_PROBE_PARALLEL'));
const warmup = Number(required('BENCH_PROBE_WARMUP'));
const pollMs = Number(required('BENCH_PROBE_POLL_MS'));
const probe = required('BENCH_PROBE');
const homeUrl = required('BENCH_HOME_URL');
const remoteUrl = new URL('/forward-auth?authenticated=true', required('BENCH_REMOTE_URL'));
const homeCa = readFileSync(required('BENCH_HOME_CA'));
const remoteCa = readFileSync(required('BENCH_REMOTE_CA'));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

// The parent wrote them; the child only reads the two fields it uses.
const pairs = (JSON.parse(await readStdin()) as { pairs: IssuedPair[] }).pairs;

// A reverse proxy keeps its connections to the verifier open; a TLS handshake per poll would load
// the verifier (and this process) with work no deployment does, on every millisecond.
const keptAlive = new Agent({ keepAlive: true, maxSockets: parallel, ca: remoteCa });
const handshakeEach = new Agent({ keepAlive: false, ca: remoteCa });
const revoking = new Agent({ keepAlive: true, maxSockets: parallel, ca: homeCa });

function send(url: URL, agent: Agent, headers: Record<string, string>, body?: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const outgoing = request(url, { agent, method: body === undefined ? 'GET' : 'POST', headers }, (incoming) => {
      incoming.resume();
      incoming.on('end', () => resolve(incoming.statusCode ?? 0));
      incoming.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

let polls = 0;
const check = (token: string) => {
  polls += 1;
  return send(remoteUrl, probe === 'new-connection' ? handshakeEach : keptAlive, { authorization: `Bearer ${token}` });
};
const revoke = (refreshToken: string) =>
  send(new URL('/v5/Authorization/revoke-oauth-token', homeUrl), revoking, { 'content-type': 'application/json' }, JSON.stringify({ refresh_token: refreshToken }));

if ((await check(pairs[0]!.token)) !== 200) throw new Error('the remote verifier does not accept tokens from home');

const samples: ProbeSample[] = [];
const startedAt = epochNow();
const waitedBefore = processRunQueueWaitSeconds(process.pid);
let next = 0;
let timed = -warmup;
const worker = async () => {
  for (;;) {
    const pair = pairs[next++];
    if (!pair) return;
    const status = await revoke(pair.refresh_token);
    if (status !== 200) throw new Error(`revoke answered ${status}`);
    const answeredAt = epochNow();
    const deadline = answeredAt + 10_000;
    while ((await check(pair.token)) !== 401) {
      if (epochNow() > deadline) throw new Error('a revocation did not reach the remote verifier within 10 s');
      await sleep(pollMs);
    }
    const rejectedAt = epochNow();
    if ((timed += 1) <= 0) continue;
    samples.push({ family: familyOf(pair.token), answeredAt, rejectedAt });
  }
};
await Promise.all(Array.from({ length: parallel }, worker));
keptAlive.destroy();
handshakeEach.destroy();
revoking.destroy();
const seconds = (epochNow() - startedAt) / 1000;
const waitedAfter = processRunQueueWaitSeconds(process.pid);
const waitPercent = waitedBefore === undefined || waitedAfter === undefined ? undefined : Math.round(((waitedAfter - waitedBefore) / seconds) * 100);
const result: ProbeResult = { samples, cpus: allowedCpus(process.pid), polls, seconds, ...(waitPercent === undefined ? {} : { waitPercent }) };
process.stdout.write(`${JSON.stringify(result)}\n`);
