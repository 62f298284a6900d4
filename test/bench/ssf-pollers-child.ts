/**
 * Receivers polling Tessera's Shared Signals transmitter, in a process of their own so that their
 * parsing of large answers never slows the prober that measures issuance beside them. One poller
 * per stream id, each asking for up to 1,000 SETs without acknowledging (the worst a receiver can
 * ask: every answer is the whole backlog), until SIGTERM. Each behaves as a compliant receiver: a
 * 429 is asked again only after its Retry-After (the transmitter refuses an empty poll that returns
 * at once within TESSERA_SSF_EMPTY_POLL_INTERVAL of the last). Prints `{"ready":true}`, then on
 * SIGTERM `{"polls":N,"refused":N,"bytes":N}` (refused: the 429s among the polls) and exits.
 *
 * Environment: BASE_URL, RECEIVER_TOKEN, STREAM_IDS (comma-separated), CA_FILE.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';

const baseUrl = process.env.BASE_URL!;
const token = process.env.RECEIVER_TOKEN!;
const streamIds = process.env.STREAM_IDS!.split(',');
const agent = new Agent({ keepAlive: true, ca: readFileSync(process.env.CA_FILE!), maxSockets: streamIds.length });
let stopping = false;
/** Ends the Retry-After waits at once on SIGTERM. */
const stopped = new AbortController();
let polls = 0;
let refused = 0;
let bytes = 0;

/** The answer's bytes when answered, or the seconds its Retry-After asks to wait when refused. */
const poll = (streamId: string): Promise<{ readonly bytes: number; readonly retryAfterSeconds?: number }> =>
  new Promise((resolve, reject) => {
    const outgoing = request(new URL(`/ssf/poll?stream_id=${streamId}`, baseUrl), { method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } }, (incoming) => {
      // Counted, not parsed: the load is what Tessera does to answer, and parsing 700 KB here would take this core from the prober.
      let received = 0;
      incoming.on('data', (chunk: Buffer) => (received += chunk.length));
      incoming.on('end', () => {
        const retryAfter = Number(incoming.headers['retry-after']);
        if (incoming.statusCode === 429 || incoming.statusCode === 503) resolve({ bytes: 0, retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : 1 });
        else resolve({ bytes: incoming.statusCode === 200 ? received : 0 });
      });
    });
    outgoing.on('error', reject);
    outgoing.end(JSON.stringify({ maxEvents: 1000, returnImmediately: true }));
  });

const loops = streamIds.map(async (streamId) => {
  while (!stopping) {
    const answer = await poll(streamId);
    polls += 1;
    bytes += answer.bytes;
    if (answer.retryAfterSeconds === undefined) continue;
    refused += 1;
    await sleep(answer.retryAfterSeconds * 1000, undefined, { signal: stopped.signal }).catch(() => undefined);
  }
});
process.on('SIGTERM', () => {
  stopping = true;
  stopped.abort();
  void Promise.all(loops).then(() => {
    process.stdout.write(`${JSON.stringify({ polls, refused, bytes })}\n`);
    agent.destroy();
    process.exit(0);
  });
});
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
