import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileCheckpoints, DeliveryCheckpointsCorrupt } from './delivery-checkpoints.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-ssf-checkpoints-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const failOnSave = (error: unknown) => {
  throw error;
};

describe('the Shared Signals checkpoint file', () => {
  it('starts empty without a file, and a new instance reads back every stream saved', async () => {
    const file = join(root, 'ssf', 'ssf-checkpoints.json');
    const checkpoints = createFileCheckpoints(file, failOnSave);
    expect(checkpoints.get('s1')).toBeUndefined();
    checkpoints.set('s1', 7n);
    checkpoints.set('s2', 9_007_199_254_740_993n);
    await checkpoints.flush();
    const reopened = createFileCheckpoints(file, failOnSave);
    expect([reopened.get('s1'), reopened.get('s2'), reopened.get('s3')]).toEqual([7n, 9_007_199_254_740_993n, undefined]);
  });

  it.each([
    ['not JSON', 'half a file'],
    ['JSON null', 'null'],
    ['no streams', '{}'],
    ['a position that is a number', '{"streams":{"s1":7}}'],
    ['a position that is not digits', '{"streams":{"s1":"7n"}}'],
  ])('a file holding %s is refused as corrupt, naming the file', (_what, text) => {
    const file = join(root, 'ssf-checkpoints.json');
    writeFileSync(file, text);
    expect(() => createFileCheckpoints(file, failOnSave)).toThrow(DeliveryCheckpointsCorrupt);
    expect(() => createFileCheckpoints(file, failOnSave)).toThrow(file);
  });
});
