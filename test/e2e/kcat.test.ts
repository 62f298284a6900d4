import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';

/**
 * The revocation topic as a downstream team in another language reads it: with kcat (librdkafka),
 * not our own client. docs/kafka.md: key = family id, value = the contracts event with its event id
 * and global position, header `type` = the event type. Skips loudly without kcat; .ci/run installs it.
 */
const { brokers } = kafkaTestEnvironment('revocation topic read with kcat');
const kcat = spawnSync('kcat', ['-V'], { stdio: 'ignore' }).status === 0;
if (!kcat) console.warn(`\n${'!'.repeat(78)}\n!! SKIPPING kcat e2e: kcat is not on PATH (Debian: apt-get install kcat). The topic's wire format is NOT read by a non-JS client in this run.\n${'!'.repeat(78)}\n`);
const topic = `tessera.revocations.kcat.${process.pid}.${Date.now()}`;

interface KcatMessage {
  readonly key: string | null;
  readonly payload: string | null;
  readonly headers?: string[];
  readonly ts: number;
}

/** Every message on the topic so far, through kcat's JSON envelope (-J); -e: stop at the end. */
function readTopic(): KcatMessage[] {
  const run = spawnSync('kcat', ['-C', '-b', brokers!, '-t', topic, '-o', 'beginning', '-e', '-J', '-q'], { encoding: 'utf8', timeout: 20_000 });
  if (run.status !== 0) throw new Error(`kcat failed (${run.status}): ${run.stderr}`);
  return run.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as KcatMessage);
}
const headerOf = (message: KcatMessage, name: string) => {
  const headers = message.headers ?? [];
  for (let i = 0; i + 1 < headers.length; i += 2) if (headers[i] === name) return headers[i + 1];
  return undefined;
};

describe.skipIf(!brokers || !kcat)('the revocation topic, read with kcat', () => {
  let tessera: TesseraProcess;
  let account: Credentials;
  beforeAll(async () => {
    tessera = await startTessera({ TESSERA_KAFKA_BROKERS: brokers!, TESSERA_KAFKA_TOPIC: topic });
    account = await tessera.createAccount();
  });
  afterAll(async () => {
    await tessera?.stop();
  });

  it('carries a rotation and a revocation keyed by family id, with the type header and the event with its id and position; no secret in it', async () => {
    const issued = (await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key })).json() as {
      token: string;
      refresh_token: string;
    };
    const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { fid: string; gen: number };
    const familyId = claims(issued.token).fid;
    const refreshed = (await tessera.postJson('/v5/Authorization/refresh-oauth-token', { refresh_token: issued.refresh_token })).json() as { token: string; refresh_token: string };
    expect((await tessera.postJson('/v5/Authorization/revoke-oauth-token', { refresh_token: refreshed.refresh_token })).status).toBe(200);

    let messages: KcatMessage[] = [];
    await expect
      .poll(
        () => {
          messages = readTopic();
          return messages.filter((message) => message.key === familyId).map((message) => headerOf(message, 'type'));
        },
        { timeout: 20_000, interval: 250 },
      )
      .toEqual(['TokenRotated', 'TokenRevoked']);

    const ofFamily = messages.filter((message) => message.key === familyId);
    const values = ofFamily.map((message) => JSON.parse(message.payload!) as { eventId: string; position: string; event: { type: string; familyId: string; generation: number } });
    expect(values.map((value) => value.event.type)).toEqual(['TokenRotated', 'TokenRevoked']);
    for (const value of values) {
      expect(value.event.familyId).toBe(familyId);
      expect(value.eventId).toMatch(/\S/);
      expect(value.position).toMatch(/^(0|[1-9]\d*)$/);
    }
    expect(BigInt(values[1]!.position)).toBeGreaterThan(BigInt(values[0]!.position));
    // The rotation names the generation it made current: the refreshed token's `gen`.
    expect(values[0]!.event.generation).toBe(claims(refreshed.token).gen);
    expect(values[0]!.event.generation).toBe(claims(issued.token).gen + 1);

    const everything = messages.map((message) => `${message.key ?? ''} ${message.payload ?? ''} ${(message.headers ?? []).join(' ')}`).join('\n');
    for (const secret of [issued.token, issued.refresh_token, refreshed.token, refreshed.refresh_token, account.transaction_key]) {
      expect(everything.includes(secret)).toBe(false);
    }
  });
});
