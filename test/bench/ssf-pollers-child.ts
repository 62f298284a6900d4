/**
 * Receivers polling Tessera's Shared Signals transmitter, in a process of their own so that their
 * parsing of large answers never slows the prober that measures issuance beside them. One poller
 * per stream id, each asking for up to 1,000 SETs without acknowledging (the worst a receiver can
 * ask: every answer is the whole backlog), until SIGTERM. Prints `{"ready":true}`, then on SIGTERM
 * `{"polls":N,"bytes":N}` and exits.
 *
 * Environment: BASE_URL, RECEIVER_TOKEN, STREAM_IDS (comma-separated), CA_FILE.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';

const baseUrl = process.env.BASE_URL!;
const token = process.env.RECEIVER_TOKEN!;
const streamIds = process.env.STREAM_IDS!.split(',');
const agent = new Agent({ keepAlive: true, ca: readFileSync(process.env.CA_FILE!), maxSockets: streamIds.length });
let stopping = false;
let polls = 0;
let bytes = 0;

const poll = (streamId: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const outgoing = request(new URL(`/ssf/poll?stream_id=${streamId}`, baseUrl), { method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } }, (incoming) => {
      // Counted, not parsed: the load is what Tessera does to answer, and parsing 700 KB here would take this core from the prober.
      let received = 0;
      incoming.on('data', (chunk: Buffer) => (received += chunk.length));
      incoming.on('end', () => resolve(incoming.statusCode === 200 ? received : 0));
    });
    outgoing.on('error', reject);
    outgoing.end(JSON.stringify({ maxEvents: 1000, returnImmediately: true }));
  });

const loops = streamIds.map(async (streamId) => {
  while (!stopping) {
    bytes += await poll(streamId);
    polls += 1;
  }
});
process.on('SIGTERM', () => {
  stopping = true;
  void Promise.all(loops).then(() => {
    process.stdout.write(`${JSON.stringify({ polls, bytes })}\n`);
    agent.destroy();
    process.exit(0);
  });
});
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
