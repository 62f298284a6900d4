import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';

/**
 * What `tessera relay` leaves in its data folder is readable by its own user only. A standalone
 * relay reads a log kept elsewhere (TESSERA_EVENT_STORE), so its data folder may hold nothing but
 * its checkpoints (and its listeners' TLS material), and may not exist before it starts.
 */
const { brokers } = kafkaTestEnvironment('relay files at rest');
const topic = `tessera.revocations.e2e.modes.${process.pid}.${Date.now()}`;

// Octal text, so a failure reads '644', not 420.
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe.skipIf(!brokers)('files at rest after tessera relay', () => {
  let home: TesseraProcess;
  let parent: string;
  beforeAll(async () => {
    // The log the relay reads: an all-in-one's, which holds at least its signing key's event to relay.
    home = await startTessera();
    parent = mkdtempSync(join(tmpdir(), 'tessera-e2e-relay-modes-'));
  });
  afterAll(async () => {
    await home?.stop();
    if (parent) rmSync(parent, { recursive: true, force: true });
  });

  // As in production, the listeners' certificate is supplied (here the all-in-one's), so no TLS
  // material is made in the relay's data folder: its checkpoints are all that is there.
  const runRelay = (dataDir: string, flow: string) => {
    const tls = { cert: join(home.dataDir, 'tls', 'self-signed.crt'), key: join(home.dataDir, 'tls', 'self-signed.key') };
    return startTessera(
      {
        TESSERA_KAFKA_BROKERS: brokers!,
        TESSERA_KAFKA_TOPIC: `${topic}.${flow}`,
        TESSERA_EVENT_STORE: `sqlite:${join(home.dataDir, 'events.db')}`,
        TESSERA_TLS_CERT: tls.cert,
        TESSERA_TLS_KEY: tls.key,
      },
      { command: 'relay', dataDir, keepData: true, caFile: tls.cert },
    );
  };

  async function checkpointSaved(relay: TesseraProcess): Promise<string> {
    const file = join(relay.dataDir, 'relay-checkpoint.json');
    await expect.poll(() => existsSync(file), { timeout: 15_000 }).toBe(true);
    return file;
  }

  it('a data folder the relay makes is 0700, and its checkpoint 0600', async () => {
    const dataDir = join(parent, 'made-by-the-relay');
    const relay = await runRelay(dataDir, 'new');
    try {
      const file = await checkpointSaved(relay);
      expect(mode(dataDir)).toBe('700');
      expect(mode(file)).toBe('600');
    } finally {
      await relay.stop();
    }
  });

  it('a folder and a checkpoint an older release left 0755 and 0644 are 0700 and 0600 once the relay has saved', async () => {
    const dataDir = join(parent, 'left-by-an-older-release');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    const file = join(dataDir, 'relay-checkpoint.json');
    writeFileSync(file, `${JSON.stringify({ position: '0', savedAt: '2026-01-01T00:00:00.000Z' })}\n`);
    chmodSync(file, 0o644);
    const relay = await runRelay(dataDir, 'old');
    try {
      await expect.poll(() => readPosition(file), { timeout: 15_000 }).not.toBe('0');
      expect(mode(dataDir)).toBe('700');
      expect(mode(file)).toBe('600');
    } finally {
      await relay.stop();
    }
  });
});

/** The position a checkpoint file holds (the relay replaces it whole, by rename). */
function readPosition(file: string): string {
  return (JSON.parse(readFileSync(file, 'utf8')) as { position: string }).position;
}
