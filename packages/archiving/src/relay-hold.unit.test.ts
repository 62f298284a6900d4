import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { relayCheckpointsPast } from './relay-hold.js';

const folders: string[] = [];
const folder = () => {
  const made = mkdtempSync(join(tmpdir(), 'tessera-relay-hold-'));
  folders.push(made);
  return made;
};
afterEach(() => {
  for (const made of folders.splice(0)) rmSync(made, { recursive: true, force: true });
});

describe('archiving waits for the relay of its data folder', () => {
  it('holds everything while the relay has no checkpoint, or one it cannot read', () => {
    const dir = folder();
    expect(relayCheckpointsPast(dir, false)).toBeUndefined();
    writeFileSync(join(dir, 'relay-checkpoint.json'), 'not json');
    expect(relayCheckpointsPast(dir, false)).toBeUndefined();
  });

  it('is past the lowest of the relay\'s checkpoints', () => {
    const dir = folder();
    writeFileSync(join(dir, 'relay-checkpoint.json'), JSON.stringify({ position: '120', savedAt: '2026-01-01T00:00:00.000Z' }));
    expect(relayCheckpointsPast(dir, false)).toBe(120n);
    expect(relayCheckpointsPast(dir, true)).toBeUndefined();
    writeFileSync(join(dir, 'relay-accounts-checkpoint.json'), JSON.stringify({ position: '95' }));
    expect(relayCheckpointsPast(dir, true)).toBe(95n);
  });
});
