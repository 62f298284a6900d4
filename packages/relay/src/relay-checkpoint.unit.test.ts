import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileCheckpoint, RelayCheckpointCorrupt } from './relay-checkpoint.js';

/** The relay's checkpoint file on disk: whole after every save, and readable by its own user only. */
// Octal text, so a failure reads '644', not 420.
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-relay-checkpoint-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('the relay checkpoint file', () => {
  it('a save into a folder that does not exist makes it 0700, and the checkpoint 0600, which load reads back', async () => {
    const folder = join(root, 'data');
    const file = join(folder, 'relay-checkpoint.json');
    const checkpoint = createFileCheckpoint(file);
    expect(await checkpoint.load()).toBeUndefined();
    await checkpoint.save(42n);
    expect(mode(folder)).toBe('700');
    expect(mode(file)).toBe('600');
    expect(await createFileCheckpoint(file).load()).toBe(42n);
    expect(readdirSync(folder)).toEqual(['relay-checkpoint.json']);
  });

  it('a folder and a checkpoint an older release left 0755 and 0644 are 0700 and 0600: the file on load, the folder on the first save', async () => {
    const folder = join(root, 'data');
    mkdirSync(folder);
    chmodSync(folder, 0o755);
    const file = join(folder, 'relay-checkpoint.json');
    writeFileSync(file, `${JSON.stringify({ position: '7' })}\n`);
    chmodSync(file, 0o644);
    const checkpoint = createFileCheckpoint(file);
    expect(await checkpoint.load()).toBe(7n);
    expect(mode(file)).toBe('600');
    await checkpoint.save(8n);
    expect(mode(folder)).toBe('700');
    expect(mode(file)).toBe('600');
  });

  it('a temporary file a crash left 0644 does not make the next checkpoint 0644', async () => {
    const file = join(root, 'relay-checkpoint.json');
    const leftOver = `${file}.${process.pid}.tmp`;
    writeFileSync(leftOver, 'half a checkpoint');
    chmodSync(leftOver, 0o644);
    await createFileCheckpoint(file).save(9n);
    expect(mode(file)).toBe('600');
    expect(await createFileCheckpoint(file).load()).toBe(9n);
  });

  it.each([
    ['not JSON', 'half a checkpoint'],
    ['JSON null', 'null'],
    ['no position', '{}'],
    ['a position that is a number', '{"position":42}'],
    ['a position that is not digits', '{"position":"-1"}'],
  ])('a checkpoint holding %s is refused as corrupt, naming the file', async (_what, text) => {
    const file = join(root, 'relay-checkpoint.json');
    writeFileSync(file, text, { mode: 0o600 });
    const loading = createFileCheckpoint(file).load();
    await expect(loading).rejects.toBeInstanceOf(RelayCheckpointCorrupt);
    await expect(loading).rejects.toThrow(file);
  });
});
