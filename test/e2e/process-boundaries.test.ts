import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createKafkaFeed } from '@tessera/feed';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';

/**
 * Package boundaries that match roles, seen from outside: which modules a
 * real process loads. A hook records every module it resolves; the tests read the list.
 */
const run = promisify(execFile);
const repositoryRoot = resolve(import.meta.dirname, '..', '..');
const cli = join(repositoryRoot, 'services', 'cli', 'bin', 'tessera.js');
const recorder = join(repositoryRoot, 'test', 'support', 'record-imports.mjs');
const scratch = mkdtempSync(join(tmpdir(), 'tessera-imports-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const loaded = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);
const matching = (modules: string[], pattern: RegExp) => [...new Set(modules.filter((url) => pattern.test(url)))];

describe('what a process loads', () => {
  it('an admin command (accounts create, list, rotate-key --revoke-tokens; admin-tokens create, list; ssf-receivers create, list) loads no HTTP server, no Kafka client, no prom-client', async () => {
    const dataDir = join(scratch, 'admin');
    const file = join(scratch, 'admin.imports');
    const env = { ...process.env, TESSERA_DATA_DIR: dataDir, TESSERA_RECORD_IMPORTS: file, NODE_OPTIONS: '' };
    const { stdout } = await run(process.execPath, ['--import', recorder, cli, 'accounts', 'create', '--name', 'boundaries', '--json'], { env });
    await run(process.execPath, ['--import', recorder, cli, 'accounts', 'list'], { env });
    // --revoke-tokens reads token lifetimes from the log through @tessera/admin's subpath, not its routes.
    await run(process.execPath, ['--import', recorder, cli, 'accounts', 'rotate-key', '--account', (JSON.parse(stdout) as { account_id: string }).account_id, '--revoke-tokens'], { env });
    await run(process.execPath, ['--import', recorder, cli, 'admin-tokens', 'create', '--name', 'boundaries', '--scope', 'audit:read'], { env });
    await run(process.execPath, ['--import', recorder, cli, 'admin-tokens', 'list'], { env });
    await run(process.execPath, ['--import', recorder, cli, 'ssf-receivers', 'create', '--name', 'boundaries'], { env });
    await run(process.execPath, ['--import', recorder, cli, 'ssf-receivers', 'list'], { env });
    const modules = loaded(file);
    expect(matching(modules, /better-sqlite3/).length).toBeGreaterThan(0); // the hook saw the store driver it did load
    expect(matching(modules, /\/node_modules\/(fastify|@fastify|kafkajs|prom-client|pino)\//)).toEqual([]);
    expect(matching(modules, /\/packages\/server\//)).toEqual([]);
  });

  const { brokers } = kafkaTestEnvironment('Kafka-fed verifier boundaries');
  describe.skipIf(!brokers)('a Kafka-fed verifier', () => {
    let verifier: TesseraProcess | undefined;
    afterAll(async () => verifier?.stop());

    it('opens no event store: it loads neither the SQLite driver nor EventStoreDB gRPC', async () => {
      const file = join(scratch, 'verifier.imports');
      const topic = `tessera.revocations.boundaries.${process.pid}`;
      // The topic exists before a verifier subscribes to it (the relay or the operator makes it).
      const feed = createKafkaFeed({ brokers: brokers!, topic });
      await feed.ensureTopic();
      await feed.close();
      verifier = await startTessera(
        {
          TESSERA_KAFKA_BROKERS: brokers!,
          TESSERA_KAFKA_TOPIC: topic,
          TESSERA_VERIFIER_SOURCE: 'kafka',
          TESSERA_RECORD_IMPORTS: file,
        },
        { command: 'verifier', nodeArgs: ['--import', recorder] },
      );
      const modules = loaded(file);
      expect(matching(modules, /\/node_modules\/kafkajs\//).length).toBeGreaterThan(0);
      expect(matching(modules, /better-sqlite3|@grpc|@eventstore|event-store-sqlite|event-store-esdb/)).toEqual([]);
    });
  });
});
