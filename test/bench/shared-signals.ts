/**
 * The Shared Signals transmitter: revoke-oauth-token answered → the SET received by a push
 * receiver on loopback, one revocation at a time; then 100 streams × 1,000 revocations delivered,
 * counted per stream for loss and duplicates. `npm run bench -- ssf` runs this part alone.
 *
 * The receiver is an HTTPS server in this process that answers 202 as soon as a SET's body has
 * arrived, and reads the family from its session subject. Tessera is `tessera start` with its own
 * certificate, which it also trusts (NODE_EXTRA_CA_CERTS) as the receiver's.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { freePort, startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { progress, startChild } from './children.js';
import { detectPinning } from './pinning.js';
import { atLeast, atMost, type Row } from './report.js';

export interface Latency {
  readonly samples: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface SharedSignalsResult {
  readonly latency: Latency & { readonly beforeAnswer: number };
  /** The same, with `idleStreams` more streams open and one receiver polling its own stream beside it. */
  readonly crowded: Latency & { readonly idleStreams: number; readonly beforeAnswer: number; readonly polled: number };
  /** Resident memory the idle streams added, bytes per stream (process RSS after a full GC, once the streams settled). */
  readonly rssPerIdleStreamBytes: number;
  /** What they added to the live heap and external memory after a full GC, bytes per stream: RSS without the allocator's slack. */
  readonly livePerIdleStreamBytes: number;
  /** get-oauth-token alone, then beside `pollers` receivers each polling a stream of 1,000 unacknowledged SETs as fast as answered (after Retry-After when refused 429: `refused` of the `polls`). */
  readonly issuanceBesidePolls: { readonly pollers: number; readonly pendingPerStream: number; readonly alone: Latency; readonly beside: Latency; readonly polls: number; readonly refused: number; readonly megabytesAnswered: number };
  readonly throughput: {
    readonly streams: number;
    readonly revocations: number;
    readonly expected: number;
    readonly received: number;
    readonly lost: number;
    readonly duplicates: number;
    readonly seconds: number;
    readonly setsPerSecond: number;
  };
}

const epochNow = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
const round = (n: number) => Math.round(n * 100) / 100;

/** The receiver: every SET's arrival time, by stream (the path's last segment) and family. */
class Receiver {
  readonly arrivals = new Map<string, Map<string, number>>();
  duplicates = 0;
  received = 0;
  private waiters = new Map<string, () => void>();

  constructor(readonly server: Server) {}

  record(stream: string, family: string): void {
    const at = epochNow();
    let families = this.arrivals.get(stream);
    if (!families) this.arrivals.set(stream, (families = new Map()));
    if (families.has(family)) this.duplicates += 1;
    else families.set(family, at);
    this.received += 1;
    this.waiters.get(`${stream}/${family}`)?.();
  }

  /** Resolves with the SET's arrival time once it has arrived. */
  async arrival(stream: string, family: string, timeoutMs = 10_000): Promise<number> {
    const known = this.arrivals.get(stream)?.get(family);
    if (known !== undefined) return known;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no SET for family ${family} on stream ${stream} within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.set(`${stream}/${family}`, () => {
        clearTimeout(timer);
        this.waiters.delete(`${stream}/${family}`);
        resolve();
      });
    });
    return this.arrivals.get(stream)!.get(family)!;
  }
}

async function startReceiver(cert: string, key: string): Promise<Receiver> {
  const server = createServer({ cert, key, keepAliveTimeout: 60_000 });
  const receiver = new Receiver(server);
  server.on('request', (incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const claims = JSON.parse(Buffer.from(Buffer.concat(chunks).toString('utf8').split('.')[1]!, 'base64url').toString('utf8')) as { sub_id: { session?: { id: string } } };
      const stream = (incoming.url ?? '').split('/').pop() ?? '';
      if (claims.sub_id.session) receiver.record(stream, claims.sub_id.session.id);
      outgoing.writeHead(202).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return receiver;
}

/** Token requests over one keep-alive connection per caller, as a client library would. */
export function client(tessera: TesseraProcess, ca: Buffer) {
  const agent = new Agent({ keepAlive: true, ca, maxSockets: 32 });
  const post = (path: string, body: unknown, token?: string): Promise<{ status: number; json: () => Record<string, unknown> }> =>
    new Promise((resolve, reject) => {
      const payload = JSON.stringify(body);
      const outgoing = request(new URL(path, tessera.baseUrl), { method: 'POST', agent, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) } }, (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: incoming.statusCode ?? 0, json: () => JSON.parse(text) as Record<string, unknown> });
        });
      });
      outgoing.on('error', reject);
      outgoing.end(payload);
    });
  return { post, close: () => agent.destroy() };
}

export const latencyOf = (values: readonly number[]): Latency => {
  const sorted = [...values].sort((a, b) => a - b);
  return { samples: sorted.length, p50Ms: round(percentile(sorted, 50)), p90Ms: round(percentile(sorted, 90)), p99Ms: round(percentile(sorted, 99)), maxMs: round(sorted[sorted.length - 1]!) };
};

interface MemoryAfterGc {
  readonly rss: number;
  readonly heapUsed: number;
  readonly external: number;
}

/** Asks Tessera (run with full-gc-on-signal.mjs) for a full GC and reads the memory it writes right after. */
async function memoryAfterGc(pid: number, memoryFile: string): Promise<MemoryAfterGc> {
  const linesOf = () => (existsSync(memoryFile) ? readFileSync(memoryFile, 'utf8').split('\n').filter(Boolean) : []);
  const before = linesOf().length;
  process.kill(pid, 'SIGUSR2');
  const deadline = performance.now() + 5_000;
  for (;;) {
    const lines = linesOf();
    if (lines.length > before) return JSON.parse(lines[lines.length - 1]!) as MemoryAfterGc;
    if (performance.now() > deadline) throw new Error('Tessera wrote no memory reading within 5 s of SIGUSR2');
    await sleep(20);
  }
}

export async function measureSharedSignals(options: { samples?: number; streams?: number; revocations?: number; idleStreams?: number; pollers?: number } = {}): Promise<SharedSignalsResult> {
  const samples = options.samples ?? 500;
  const idleStreams = options.idleStreams ?? 1_000;
  const pollers = options.pollers ?? 6;
  const pinning = detectPinning();
  const streamCount = options.streams ?? 100;
  const revocations = options.revocations ?? 1_000;
  const work = mkdtempSync(join(tmpdir(), 'tessera-bench-ssf-'));
  const dataDir = join(work, 'data');
  mkdirSync(join(dataDir, 'tls'), { recursive: true, mode: 0o700 });
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] }],
  });
  const certFile = join(dataDir, 'tls', 'self-signed.crt');
  writeFileSync(join(dataDir, 'tls', 'self-signed.key'), pems.private, { mode: 0o600 });
  writeFileSync(certFile, pems.cert);
  const receiver = await startReceiver(pems.cert, pems.private);
  const receiverPort = (receiver.server.address() as AddressInfo).port;
  const port = await freePort();
  const memoryFile = join(work, 'memory.jsonl');
  const publicUrl = `https://localhost:${port}`;
  progress('shared signals: starting Tessera (tessera start) and a push receiver on loopback');
  const tessera = await startTessera(
    { BENCH_MEMORY_FILE: memoryFile, TESSERA_PORT: String(port), TESSERA_PUBLIC_URL: publicUrl, NODE_EXTRA_CA_CERTS: certFile, TESSERA_EGRESS_ALLOW: 'localhost', TESSERA_SSF_MAX_STREAMS_PER_RECEIVER: '2000', TESSERA_SSF_POLL_WAIT: '5', TESSERA_LOG_LEVEL: process.env.BENCH_TESSERA_LOG_LEVEL ?? 'info' },
    {
      dataDir,
      logFile: join(work, 'tessera.log'),
      nodeArgs: ['--expose-gc', '--import', new URL('./full-gc-on-signal.mjs', import.meta.url).pathname],
      ...(pinning.pinned ? { cpuList: pinning.serverCpus } : {}),
    },
  );
  const http = client(tessera, readFileSync(certFile));
  try {
    const account: Credentials = await tessera.createAccount();
    const receiverToken = (JSON.parse((await tessera.tessera(['ssf-receivers', 'create', '--name', 'bench', '--json'])).stdout) as { token: string }).token;
    for (let tries = 0; (await http.post('/ssf/verify', { stream_id: 'none' }, receiverToken)).status === 401; tries += 1) {
      if (tries > 50) throw new Error('the receiver token was not accepted');
      await sleep(100);
    }
    const newStream = async (name: string): Promise<string> => {
      const created = await http.post('/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: `https://localhost:${receiverPort}/streams/${name}` } }, receiverToken);
      if (created.status !== 201) throw new Error(`creating a stream answered ${created.status}`);
      const streamId = created.json().stream_id as string;
      const added = await http.post('/ssf/subjects/add', { stream_id: streamId, subject: { format: 'iss_sub', iss: publicUrl, sub: account.account_id } }, receiverToken);
      if (added.status !== 200) throw new Error(`adding a subject answered ${added.status}`);
      return streamId;
    };
    const issue = async (count: number): Promise<string[]> => {
      const tokens: string[] = [];
      for (let index = 0; index < count; index += 1) {
        const pair = await http.post('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
        tokens.push(pair.json().refresh_token as string);
      }
      return tokens;
    };
    const familyOf = (refreshToken: string) => refreshToken.slice('tsr_'.length).split('.')[0]!;
    const revoke = async (refreshToken: string): Promise<number> => {
      const answer = await http.post('/v5/Authorization/revoke-oauth-token', { refresh_token: refreshToken });
      if (answer.status !== 200) throw new Error(`revoke answered ${answer.status}`);
      return epochNow();
    };

    // 1. Latency, one revocation at a time, one stream.
    const latencyStream = await newStream('latency');
    progress(`shared signals: ${samples} revocations one at a time (pre-issuing the pairs)`);
    const latencyTokens = await issue(samples + 20);
    const latencies: number[] = [];
    let beforeAnswer = 0;
    for (const [index, refreshToken] of latencyTokens.entries()) {
      const answered = await revoke(refreshToken);
      const arrived = await receiver.arrival('latency', familyOf(refreshToken));
      // The first 20 warm the connections and the code paths.
      if (index < 20) continue;
      if (arrived < answered) beforeAnswer += 1;
      latencies.push(Math.max(0, arrived - answered));
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const latency = { samples: latencies.length, p50Ms: round(percentile(sorted, 50)), p90Ms: round(percentile(sorted, 90)), p99Ms: round(percentile(sorted, 99)), maxMs: round(sorted[sorted.length - 1]!), beforeAnswer };

    // 1b. The same beside idleStreams more streams (poll streams that follow nothing) and one receiver polling its own stream.
    progress(`shared signals: ${idleStreams} idle streams open (resident memory before and after), and one receiver polling beside the push`);
    const memoryBefore = await memoryAfterGc(tessera.pid, memoryFile);
    for (let index = 0; index < idleStreams; index += 1) {
      const created = await http.post('/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } }, receiverToken);
      if (created.status !== 201) throw new Error(`creating an idle stream answered ${created.status}`);
    }
    // Settled: the workers started, the directory folded them, a few idle checkpoints passed.
    await sleep(12_000);
    const memoryAfter = await memoryAfterGc(tessera.pid, memoryFile);
    const rssPerIdleStreamBytes = Math.round((memoryAfter.rss - memoryBefore.rss) / idleStreams);
    const livePerIdleStreamBytes = Math.round((memoryAfter.heapUsed + memoryAfter.external - memoryBefore.heapUsed - memoryBefore.external) / idleStreams);
    const polledStream = (await http.post('/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } }, receiverToken)).json().stream_id as string;
    await http.post('/ssf/subjects/add', { stream_id: polledStream, subject: { format: 'iss_sub', iss: publicUrl, sub: account.account_id } }, receiverToken);
    let polling = true;
    let polled = 0;
    const poller = (async () => {
      let ack: string[] = [];
      while (polling) {
        const answer = await http.post(`/ssf/poll?stream_id=${polledStream}`, { maxEvents: 100, ack, returnImmediately: false }, receiverToken);
        ack = answer.status === 200 ? Object.keys(answer.json().sets as object) : [];
        polled += ack.length;
      }
    })();
    const crowdedTokens = await issue(samples + 20);
    const crowdedLatencies: number[] = [];
    let crowdedBeforeAnswer = 0;
    for (const [index, refreshToken] of crowdedTokens.entries()) {
      const answered = await revoke(refreshToken);
      const arrived = await receiver.arrival('latency', familyOf(refreshToken));
      if (index < 20) continue;
      if (arrived < answered) crowdedBeforeAnswer += 1;
      crowdedLatencies.push(Math.max(0, arrived - answered));
    }
    polling = false;
    await poller;
    const crowded = { ...latencyOf(crowdedLatencies), idleStreams, beforeAnswer: crowdedBeforeAnswer, polled };
    await http.post('/ssf/subjects/remove', { stream_id: polledStream, subject: { format: 'iss_sub', iss: publicUrl, sub: account.account_id } }, receiverToken);

    // 4. Issuance alone, then beside `pollers` receivers each polling 1,000 unacknowledged SETs (a second account's, on streams of their own).
    progress(`shared signals: issuance beside ${pollers} receivers polling 1,000 pending SETs each`);
    const other: Credentials = await tessera.createAccount();
    const pollStreams: string[] = [];
    for (let index = 0; index < pollers; index += 1) {
      const streamId = (await http.post('/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } }, receiverToken)).json().stream_id as string;
      await http.post('/ssf/subjects/add', { stream_id: streamId, subject: { format: 'iss_sub', iss: publicUrl, sub: other.account_id } }, receiverToken);
      pollStreams.push(streamId);
    }
    for (let index = 0; index < 1_000; index += 1) {
      const pair = await http.post('/v5/Authorization/get-oauth-token', { api_login_id: other.api_login_id, transaction_key: other.transaction_key });
      await revoke(pair.json().refresh_token as string);
    }
    // Every poll stream holds its 1,000 SETs (the transmitter's own gauge says so), and has answered once (what it answers is signed).
    const pendingOf = async (streamId: string) => Number(new RegExp(`tessera_ssf_pending_sets\\{stream_id="${streamId}"\\} (\\d+)`).exec((await tessera.adminRequest('/metrics')).text)?.[1] ?? 0);
    for (const streamId of pollStreams) {
      const deadline = Date.now() + 60_000;
      while ((await pendingOf(streamId)) < 1_000 && Date.now() < deadline) await sleep(100);
      await http.post(`/ssf/poll?stream_id=${streamId}`, { maxEvents: 1000, returnImmediately: true }, receiverToken);
    }
    // 7,000 sequential gets, about 10 s: long enough that a p99 rests on 70 samples rather than 10,
    // and that the window beside the pollers spans their acknowledgment deadline (10 s by default),
    // so it holds both the first answers (each SET signed) and the backlog answered again.
    const issuance = async (): Promise<Latency> => {
      const times: number[] = [];
      for (let index = 0; index < 7_000; index += 1) {
        const started = performance.now();
        const answer = await http.post('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
        if (answer.status !== 200) throw new Error(`get-oauth-token answered ${answer.status}`);
        if (index >= 50) times.push(performance.now() - started);
      }
      return latencyOf(times);
    };
    const alone = await issuance();
    const pollerChild = await startChild<{ ready: boolean }>('ssf-pollers-child.ts', {
      env: { BASE_URL: tessera.baseUrl, RECEIVER_TOKEN: receiverToken, STREAM_IDS: pollStreams.join(','), CA_FILE: certFile },
      ...(pinning.pinned ? { cpuList: pinning.loadGeneratorCpus } : {}),
    });
    let pollerTotals = '';
    pollerChild.process.stdout?.on('data', (chunk: Buffer) => (pollerTotals += chunk.toString('utf8')));
    await sleep(1_000);
    const beside = await issuance();
    await pollerChild.stop();
    const totals = JSON.parse(pollerTotals.trim().split('\n').pop() ?? '{}') as { polls?: number; refused?: number; bytes?: number };
    const issuanceBesidePolls = { pollers, pendingPerStream: 1_000, alone, beside, polls: totals.polls ?? 0, refused: totals.refused ?? 0, megabytesAnswered: round((totals.bytes ?? 0) / 1e6) };
    for (const streamId of pollStreams) await http.post('/ssf/subjects/remove', { stream_id: streamId, subject: { format: 'iss_sub', iss: publicUrl, sub: other.account_id } }, receiverToken);

    // 2. Throughput: streamCount streams on the account (the latency stream leaves it), revocations as fast as 16 callers make them.
    await http.post('/ssf/subjects/remove', { stream_id: latencyStream, subject: { format: 'iss_sub', iss: publicUrl, sub: account.account_id } }, receiverToken);
    progress(`shared signals: ${streamCount} streams × ${revocations} revocations (pre-issuing the pairs)`);
    const names = Array.from({ length: streamCount }, (_, index) => `bulk-${index}`);
    for (const name of names) await newStream(name);
    const bulkTokens = await issue(revocations);
    const duplicatesBefore = receiver.duplicates;
    const bulkReceived = () => names.reduce((sum, name) => sum + (receiver.arrivals.get(name)?.size ?? 0), 0);
    const started = epochNow();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < bulkTokens.length) await revoke(bulkTokens[next++]!);
      }),
    );
    const expected = streamCount * revocations;
    const deadline = Date.now() + 600_000;
    const delivered = () => names.reduce((sum, name) => sum + bulkTokens.filter((token) => receiver.arrivals.get(name)?.has(familyOf(token))).length, 0);
    while (bulkReceived() < expected && Date.now() < deadline) await sleep(20);
    const last = Math.max(...names.flatMap((name) => [...(receiver.arrivals.get(name)?.values() ?? [])]));
    const seconds = (last - started) / 1000;
    const received = delivered();
    return {
      latency,
      crowded,
      rssPerIdleStreamBytes,
      livePerIdleStreamBytes,
      issuanceBesidePolls,
      throughput: { streams: streamCount, revocations, expected, received, lost: expected - received, duplicates: receiver.duplicates - duplicatesBefore, seconds: round(seconds), setsPerSecond: Math.round(received / seconds) },
    };
  } finally {
    http.close();
    await tessera.stop();
    await new Promise<void>((resolve) => receiver.server.close(() => resolve()));
    receiver.server.closeAllConnections();
    rmSync(work, { recursive: true, force: true });
  }
}

export function describeSharedSignals(result: SharedSignalsResult): string {
  const { latency: l, throughput: t } = result;
  return [
    `shared signals: revoke answered → SET received (push, loopback), ${l.samples} one at a time: p50 ${l.p50Ms} ms, p90 ${l.p90Ms} ms, p99 ${l.p99Ms} ms, max ${l.maxMs} ms (${l.beforeAnswer} arrived before the answer: counted 0)`,
    `shared signals: the same beside ${result.crowded.idleStreams} idle streams and a receiver polling (${result.crowded.polled} SETs polled): p50 ${result.crowded.p50Ms} ms, p90 ${result.crowded.p90Ms} ms, p99 ${result.crowded.p99Ms} ms, max ${result.crowded.maxMs} ms`,
    `shared signals: memory per idle stream after a full GC: RSS ${result.rssPerIdleStreamBytes} bytes, live heap + external ${result.livePerIdleStreamBytes} bytes`,
    `shared signals: get-oauth-token alone p50 ${result.issuanceBesidePolls.alone.p50Ms} / p99 ${result.issuanceBesidePolls.alone.p99Ms} ms; beside ${result.issuanceBesidePolls.pollers} polls of 1,000 pending SETs (${result.issuanceBesidePolls.polls} polls, ${result.issuanceBesidePolls.refused} of them refused 429 and asked again after Retry-After, ${result.issuanceBesidePolls.megabytesAnswered} MB answered) p50 ${result.issuanceBesidePolls.beside.p50Ms} / p99 ${result.issuanceBesidePolls.beside.p99Ms} ms`,
    `shared signals: ${t.streams} streams × ${t.revocations} revocations: ${t.received} of ${t.expected} SETs in ${t.seconds} s (${t.setsPerSecond} SETs/s), ${t.lost} lost, ${t.duplicates} duplicates`,
  ].join('\n');
}

export function sharedSignalsRows(result: SharedSignalsResult): Row[] {
  const { latency: l, throughput: t } = result;
  const p50 = atMost(l.p50Ms, 10, ' ms');
  const p99 = atMost(l.p99Ms, 25, ' ms');
  return [
    {
      what: `revoke → SET received (push), p50 / p99 ms (${l.samples})`,
      tessera: `${l.p50Ms} / ${l.p99Ms}`,
      peer: '—',
      ratio: '—',
      target: 'p50 ≤ 10, p99 ≤ 25',
      met: p50.met && p99.met,
      distance: `p50 ${p50.distance}; p99 ${p99.distance}`,
    },
    {
      what: `revoke → SET received (push) beside ${result.crowded.idleStreams} streams and a poller, p50 / p99 ms (${result.crowded.samples})`,
      tessera: `${result.crowded.p50Ms} / ${result.crowded.p99Ms}`,
      peer: '—',
      ratio: '—',
      target: 'p50 ≤ 10, p99 ≤ 25',
      met: atMost(result.crowded.p50Ms, 10, ' ms').met && atMost(result.crowded.p99Ms, 25, ' ms').met,
      distance: `p50 ${atMost(result.crowded.p50Ms, 10, ' ms').distance}; p99 ${atMost(result.crowded.p99Ms, 25, ' ms').distance}`,
    },
    { what: 'RSS per idle stream after a full GC, bytes', tessera: result.rssPerIdleStreamBytes, peer: '—', ratio: '—', target: '≤ 2,048', ...atMost(result.rssPerIdleStreamBytes, 2_048, ' B') },
    { what: 'live heap + external per idle stream after a full GC, bytes', tessera: result.livePerIdleStreamBytes, peer: '—', ratio: '—', target: '≤ 2,048', ...atMost(result.livePerIdleStreamBytes, 2_048, ' B') },
    {
      what: `get-oauth-token p99 beside ${result.issuanceBesidePolls.pollers} polls of 1,000 SETs / alone, ms`,
      tessera: `${result.issuanceBesidePolls.beside.p99Ms} / ${result.issuanceBesidePolls.alone.p99Ms}`,
      peer: '—',
      ratio: `${round(result.issuanceBesidePolls.beside.p99Ms / result.issuanceBesidePolls.alone.p99Ms)}×`,
      target: '≤ 1.1×',
      ...atMost(round(result.issuanceBesidePolls.beside.p99Ms / result.issuanceBesidePolls.alone.p99Ms), 1.1, '×'),
    },
    { what: `SETs delivered, ${t.streams} streams × ${t.revocations} revocations, SETs/s`, tessera: t.setsPerSecond, peer: '—', ratio: '—', target: 'no loss', ...atLeast(t.received, t.expected, ' SETs') },
  ];
}
