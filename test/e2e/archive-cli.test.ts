import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { generateKeyPairSync, sign } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprintOf, liveSegments, readManifest } from '@tessera/archive';
import { Archiver, archiveTrustIn, readArchivePins } from '@tessera/archiving';
import { AuditIndex, catchUpIndex } from '@tessera/audit';
import { SqliteEventStore, SqliteLogRetention } from '@tessera/event-store-sqlite';
import { issuedFamily, writeBulkLog, type BulkEntry } from '@tessera/event-store-sqlite/testing';

/**
 * The archive through what an operator and an auditor run: `tessera archive status` and
 * `tessera archive verify` (the compiled CLI) on an archive the archiver wrote, `tessera audit`
 * answering from it, and docs/audit.md's auditor walkthrough run as printed, with bash, openssl,
 * sha256sum and jq, catching a flipped byte and a removed segment.
 */
const cli = resolve(import.meta.dirname, '..', '..', 'services', 'cli', 'bin', 'tessera.js');
const day = 86_400_000;
const t0 = Date.parse('2026-01-01T00:00:00Z');
const accountId = randomUUID();
/** The auditor's tools; without one the walkthrough cannot run here, and says so. */
const auditorTools = ['bash', 'openssl', 'sha256sum', 'jq'].filter((tool) => !(process.env.PATH ?? '').split(':').some((folder) => existsSync(join(folder, tool))));
if (auditorTools.length > 0) console.warn(`SKIPPING the auditor walkthrough of docs/audit.md: ${auditorTools.join(', ')} not on PATH`);
const withAuditorTools = auditorTools.length === 0 ? it : it.skip;
let dataDir: string;
let archiveDir: string;
/** The pins an auditor keeps, as `GET /admin/v1/archive/keys` answers them, saved to a file. */
let pinFile: string;

const run = (command: string, args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(command, args, { env: { PATH: process.env.PATH ?? '', ...env } }, (error, stdout, stderr) =>
      done({ code: error ? Number((error as { code?: unknown }).code) : 0, stdout, stderr }),
    );
  });
const tessera = (args: string[]) => run(process.execPath, [cli, ...args], { TESSERA_DATA_DIR: dataDir, TESSERA_LOG_LEVEL: 'silent' });

/** docs/audit.md's auditor block, run as printed against the archive with the pinned fingerprints. */
function auditorWalkthrough(archive = archiveDir): Promise<{ code: number; stdout: string; stderr: string }> {
  const doc = readFileSync(resolve(import.meta.dirname, '..', '..', 'docs', 'audit.md'), 'utf8');
  const block = /<!-- archive-audit-test -->\n```sh\n([\s\S]*?)```/.exec(doc)?.[1];
  if (block === undefined) throw new Error('docs/audit.md has no archive-audit-test block');
  const pins = JSON.parse(readFileSync(pinFile, 'utf8')) as { keys: { fingerprint: string }[]; manifest_entries: number; manifest_head_sha256: string };
  // --norc: bash reads ~/.bashrc when its input is a socket, as under a test runner; the block needs none of it.
  return run('bash', ['--norc', '--noprofile', '-c', block], {
    ARCHIVE: archive,
    FINGERPRINTS: pins.keys.map((key) => key.fingerprint).join(' '),
    PINNED_ENTRIES: String(pins.manifest_entries),
    PINNED_HEAD: pins.manifest_head_sha256,
  });
}

function family(at: number): BulkEntry {
  return issuedFamily(accountId, at, { sourceAddress: '127.0.0.1' });
}

async function archiveRun(now: number): Promise<void> {
  const log = join(dataDir, 'events.db');
  const store = new SqliteEventStore({ file: log, readOnly: true });
  const index = AuditIndex.open(join(dataDir, 'audit-index.db'));
  const retention = new SqliteLogRetention(log);
  // The anchors are recorded at the run's time, as a server's store records them at its clock's.
  const writer = new SqliteEventStore({ file: log, clock: { now: () => now } });
  try {
    await catchUpIndex(index, store);
    const archiver = new Archiver({
      store,
      retention,
      index,
      archiveDir,
      keysDir: join(dataDir, 'keys'),
      settings: { hotWindowSeconds: 14 * 86_400, clockSkewSeconds: 60, auditRetentionSeconds: 400 * 86_400 },
      consumersPast: () => index.position(),
      trust: archiveTrustIn(store, async () => writer),
    });
    await archiver.run(now);
    // What the admin API would answer: the pins from the log, with each key's PEM.
    const pins = await readArchivePins(store);
    writeFileSync(
      pinFile,
      JSON.stringify({
        keys: [...pins.keys].map((fingerprint) => ({ fingerprint, public_key_pem: readFileSync(join(archiveDir, 'keys', `${fingerprint}.pem`), 'utf8') })),
        manifest_entries: pins.head?.sequence ?? 0,
        manifest_head_sha256: pins.head?.sha256 ?? null,
      }),
    );
  } finally {
    index.close();
    await retention.close();
    await writer.close();
    await store.close();
  }
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'tessera-e2e-archive-'));
  archiveDir = join(dataDir, 'archive');
  pinFile = join(dataDir, '..', `${dataDir.split('/').pop()}-pins.json`);
  writeBulkLog(join(dataDir, 'events.db'), [
    { stream: `account-${accountId}`, event: { type: 'AccountRegistered', v: 1, accountId, name: 'shop', permissions: [], at: Math.floor(t0 / 1000) }, recordedAt: t0, metadata: { actor: 'cli' } },
    ...Array.from({ length: 50 }, (_, i) => family(t0 + 1000 + i * 1000)),
  ]);
  await archiveRun(t0 + 20 * day);
  writeBulkLog(join(dataDir, 'events.db'), Array.from({ length: 30 }, (_, i) => family(t0 + 21 * day + i * 1000)));
  await archiveRun(t0 + 40 * day);
});
const copies: { remove: () => void }[] = [];
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(pinFile, { force: true });
  for (const copy of copies) copy.remove();
});

/** The archive alone, as an auditor holds a copy of it: no log beside it. */
function archiveCopy(): { dir: string; tessera: (args: string[]) => ReturnType<typeof run>; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-archive-copy-'));
  cpSync(archiveDir, join(dir, 'archive'), { recursive: true });
  return {
    dir: join(dir, 'archive'),
    tessera: (args) => run(process.execPath, [cli, ...args], { TESSERA_DATA_DIR: join(dir, 'no-data-here'), TESSERA_ARCHIVE_DIR: join(dir, 'archive'), TESSERA_LOG_LEVEL: 'silent' }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Re-signs entry `sequence` of `archive` with a new key of the attacker's, its public half dropped into keys/. */
function resignWithOwnKey(archive: string, sequence: number, change: (entry: Record<string, unknown>) => void): string {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const fingerprint = fingerprintOf(publicKey);
  writeFileSync(join(archive, 'keys', `${fingerprint}.pem`), publicKey.export({ type: 'spki', format: 'pem' }));
  const file = join(archive, 'manifest', `${String(sequence).padStart(8, '0')}.json`);
  const entry = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  change(entry);
  entry.key_fingerprint = fingerprint;
  const bytes = Buffer.from(`${JSON.stringify(entry, null, 1)}\n`);
  writeFileSync(file, bytes);
  writeFileSync(file.replace(/\.json$/, '.sig'), sign(null, bytes, privateKey));
  return join(archive, 'keys', `${fingerprint}.pem`);
}

describe('tessera archive, and an auditor with sha256sum and openssl', () => {
  it('status names the segments, the events and the keys; verify exits 0 on a whole archive', async () => {
    const status = await tessera(['archive', 'status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ segments: 2, archived_events: 80, manifest_entries: 2, keys: [expect.stringMatching(/^[0-9a-f]{64}$/)] });
    const verified = await tessera(['archive', 'verify']);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/verified: 2 manifest entries, 2 segments \(80 events\), chain and signatures whole; head sha256 [0-9a-f]{64}; against the pins of the event log/);
    expect(JSON.parse(status.stdout)).toMatchObject({ pinned_by: 'the event log', pinned_head: { sequence: 2 } });
  });

  it('a copy of the archive verifies against a pin file, and without one says it is not pinned', async () => {
    const copy = archiveCopy();
    copies.push(copy);
    const pinned = await copy.tessera(['archive', 'verify', '--pin', pinFile]);
    expect(pinned.code, pinned.stderr).toBe(0);
    expect(pinned.stdout).toMatch(/against the pins of pin file /);
    const unpinned = await copy.tessera(['archive', 'verify']);
    expect(unpinned.code, unpinned.stderr).toBe(0);
    expect(unpinned.stdout).toMatch(/NOT pinned: any key in keys\/ was trusted/);
    const garbage = join(copy.dir, 'not-pins.json');
    writeFileSync(garbage, '{"keys": []}');
    const refused = await copy.tessera(['archive', 'verify', '--pin', garbage]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/is not a pin file: no keys/);
  });

  it('an entry re-signed with a key dropped into keys/ passes against itself, and fails beside the log and against the pins', async () => {
    const copy = archiveCopy();
    copies.push(copy);
    resignWithOwnKey(copy.dir, 2, (entry) => {
      (entry.segment as Record<string, unknown>).rows = 29;
    });
    // Chained: entry 2 is the last one, so nothing after it has to be re-signed.
    expect((await copy.tessera(['archive', 'verify'])).code).toBe(0);
    const pinned = await copy.tessera(['archive', 'verify', '--pin', pinFile]);
    expect(pinned.code).toBe(1);
    expect(pinned.stderr).toMatch(/manifest entry 2, manifest\/00000002\.json: signed by archive key [0-9a-f]{64}, which pin file .* does not pin/);
    if (auditorTools.length === 0) expect((await auditorWalkthrough(copy.dir)).stdout).toMatch(/BROKEN: keys\/[0-9a-f]{64}\.pem is not a pinned key/);
    const manifest = join(archiveDir, 'manifest', '00000002.json');
    const original = { json: readFileSync(manifest), sig: readFileSync(manifest.replace(/\.json$/, '.sig')) };
    const dropped = resignWithOwnKey(archiveDir, 2, () => undefined);
    try {
      const verified = await tessera(['archive', 'verify']);
      expect(verified.code).toBe(1);
      expect(verified.stderr).toMatch(/which the event log does not pin/);
    } finally {
      writeFileSync(manifest, original.json);
      writeFileSync(manifest.replace(/\.json$/, '.sig'), original.sig);
      rmSync(dropped);
    }
  });

  it('a cut tail leaves a whole chain, and verify names it against the log and against the pins', async () => {
    const copy = archiveCopy();
    copies.push(copy);
    for (const name of ['00000002.json', '00000002.sig']) rmSync(join(copy.dir, 'manifest', name));
    rmSync(join(copy.dir, 'segments', '00000002.parquet'));
    expect((await copy.tessera(['archive', 'verify'])).code).toBe(0);
    const pinned = await copy.tessera(['archive', 'verify', '--pin', pinFile]);
    expect(pinned.code).toBe(1);
    expect(pinned.stderr).toMatch(/the manifest ends at entry 1, before the head pin file .* pins \(entry 2, sha256 [0-9a-f]{64}\): entries were cut off/);
    if (auditorTools.length === 0) expect((await auditorWalkthrough(copy.dir)).stdout).toContain('BROKEN: manifest/00000002.json is not the pinned head: entries were cut off or replaced');
    const manifest = join(archiveDir, 'manifest');
    renameSync(manifest, `${manifest}.away`);
    try {
      const verified = await tessera(['archive', 'verify']);
      expect(verified.code).toBe(1);
      expect(verified.stderr).toMatch(/the manifest\/ folder is missing, though the event log pins its head at entry 2/);
    } finally {
      renameSync(`${manifest}.away`, manifest);
    }
  });

  it('tessera audit answers from the archive: the account\'s archived events come back', async () => {
    const rows = await tessera(['audit', '--account', accountId, '--limit', '1000', '--json']);
    expect(rows.code, rows.stderr).toBe(0);
    expect((JSON.parse(rows.stdout) as unknown[]).length).toBe(81);
  });

  withAuditorTools('the auditor walkthrough of docs/audit.md finds the archive whole', async () => {
    const checked = await auditorWalkthrough();
    expect(checked.stderr).toBe('');
    expect(checked.stdout).not.toContain('BROKEN');
    expect(checked.stdout).toMatch(/manifest head: [0-9a-f]{64}\nsegments: whole\n$/);
  });

  withAuditorTools('one flipped byte in a segment: verify exits 1 naming it, and sha256sum names it to the auditor', async () => {
    const [first] = liveSegments(readManifest(archiveDir));
    const file = join(archiveDir, first!.segment.file);
    const original = readFileSync(file);
    const flipped = Buffer.from(original);
    flipped[100] = flipped[100]! ^ 0x01;
    writeFileSync(file, flipped);
    try {
      const verified = await tessera(['archive', 'verify']);
      expect(verified.code).toBe(1);
      expect(verified.stderr).toMatch(/^tessera: the archive is broken at manifest entry 1, segments\/00000001\.parquet: .* hashes to [0-9a-f]{64}, not the [0-9a-f]{64} its entry recorded/);
      const checked = await auditorWalkthrough();
      expect(checked.stdout).not.toContain('segments: whole');
      expect(checked.stdout + checked.stderr).toContain('segments/00000001.parquet: FAILED');
    } finally {
      writeFileSync(file, original);
    }
  });

  withAuditorTools('one removed segment: verify exits 1 naming it as missing, and so does sha256sum', async () => {
    const [, second] = liveSegments(readManifest(archiveDir));
    const file = join(archiveDir, second!.segment.file);
    copyFileSync(file, `${file}.kept`);
    rmSync(file);
    try {
      const verified = await tessera(['archive', 'verify', '--json']);
      expect(verified.code).toBe(1);
      expect(JSON.parse(verified.stdout)).toMatchObject({ ok: false, first_break: { sequence: 2, file: 'segments/00000002.parquet' } });
      expect(verified.stderr).toMatch(/segments\/00000002\.parquet is missing, and no entry records its deletion/);
      const checked = await auditorWalkthrough();
      expect(checked.stdout + checked.stderr).toMatch(/segments\/00000002\.parquet: FAILED open or read/);
    } finally {
      copyFileSync(`${file}.kept`, file);
      rmSync(`${file}.kept`);
    }
  });

  withAuditorTools('an edited manifest entry breaks its signature, for verify and for the auditor', async () => {
    const entry = join(archiveDir, 'manifest', '00000001.json');
    const original = readFileSync(entry, 'utf8');
    writeFileSync(entry, original.replace(/"rows": 50/, '"rows": 49'));
    try {
      const verified = await tessera(['archive', 'verify']);
      expect(verified.code).toBe(1);
      expect(verified.stderr).toMatch(/manifest entry 1, manifest\/00000001\.json: its signature does not verify/);
      expect((await auditorWalkthrough()).stdout).toContain('BROKEN: manifest/00000001.json is not signed by');
    } finally {
      writeFileSync(entry, original);
    }
  });
});
