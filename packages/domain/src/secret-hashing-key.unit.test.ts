import { describe, expect, it } from 'vitest';
import type { SecretHashingKeyEvent } from '@tessera/events';
import { DomainError } from './errors.js';
import {
  decideSecretHashingKey,
  evolveSecretHashingKey,
  initialSecretHashingKeyState,
  knownHashingKeys,
  type LogWriter,
  type SecretHashingKeyCommand,
} from './secret-hashing-key.js';

const [a, b, c, stranger] = ['A', 'B', 'C', 'S'].map((letter) => letter.repeat(22)) as [string, string, string, string];
const t0 = 1_800_000_000;
const fold = (events: SecretHashingKeyEvent[]) => events.reduce(evolveSecretHashingKey, initialSecretHashingKeyState());
const check = (writer: LogWriter, inUse: string | undefined, options: { held?: string[]; logHoldsEvents?: boolean } = {}): SecretHashingKeyCommand => ({
  type: 'CheckSecretHashingKey',
  writer,
  inUse,
  held: options.held ?? (inUse === undefined ? [] : [inUse]),
  logHoldsEvents: options.logHoldsEvents ?? true,
  now: t0,
});
const refusal = (events: SecretHashingKeyEvent[], command: SecretHashingKeyCommand) => {
  try {
    decideSecretHashingKey(command, fold(events));
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
  return undefined;
};
const recordedA: SecretHashingKeyEvent[] = [{ type: 'SecretHashingKeyRecorded', v: 1, fingerprint: a, at: t0 }];
const rotatedToB: SecretHashingKeyEvent[] = [...recordedA, { type: 'SecretHashingKeyRotated', v: 1, fingerprint: b, previousFingerprint: a, at: t0 + 60 }];

describe('the log\'s secret-hashing key: the check before a writer\'s first append', () => {
  it('on a new, empty log the first writer records its key, server or command-line tool, at the time it is given', () => {
    for (const writer of ['server', 'cli'] as const) {
      expect(decideSecretHashingKey(check(writer, a, { logHoldsEvents: false }), initialSecretHashingKeyState())).toEqual([
        { type: 'SecretHashingKeyRecorded', v: 1, fingerprint: a, at: t0 },
      ]);
    }
  });

  it('on a log written before fingerprints, only a server records its key; a command-line tool refuses', () => {
    expect(decideSecretHashingKey(check('server', a), initialSecretHashingKeyState())).toEqual([{ type: 'SecretHashingKeyRecorded', v: 1, fingerprint: a, at: t0 }]);
    expect(refusal([], check('cli', a))).toBe('ERR_LOG_HASHING_KEY_UNRECORDED');
  });

  it('a writer with no key on a log that holds events is refused, server or not', () => {
    expect(refusal([], check('server', undefined))).toBe('ERR_LOG_HASHING_KEY_MISSING');
    expect(refusal(recordedA, check('server', undefined))).toBe('ERR_LOG_HASHING_KEY_MISSING');
    expect(refusal(recordedA, check('cli', undefined))).toBe('ERR_LOG_HASHING_KEY_MISSING');
  });

  it('the recorded key passes and records nothing; any other key is a mismatch', () => {
    expect(decideSecretHashingKey(check('cli', a), fold(recordedA))).toEqual([]);
    expect(decideSecretHashingKey(check('server', a), fold(recordedA))).toEqual([]);
    expect(refusal(recordedA, check('cli', stranger))).toBe('ERR_LOG_HASHING_KEY_MISMATCH');
    expect(refusal(recordedA, check('server', stranger))).toBe('ERR_LOG_HASHING_KEY_MISMATCH');
  });

  it('after a rotation, a retired key in use with the current one held beside it passes; without it a tool refuses and a server may wait', () => {
    expect(decideSecretHashingKey(check('cli', b), fold(rotatedToB))).toEqual([]);
    expect(decideSecretHashingKey(check('cli', a, { held: [a, b] }), fold(rotatedToB))).toEqual([]);
    expect(refusal(rotatedToB, check('cli', a))).toBe('ERR_LOG_HASHING_KEY_MISSING');
    expect(decideSecretHashingKey(check('server', a), fold(rotatedToB))).toEqual([]);
    expect(refusal(rotatedToB, check('server', stranger, { held: [stranger, b] }))).toBe('ERR_LOG_HASHING_KEY_MISMATCH');
  });
});

describe('rotating the log\'s secret-hashing key', () => {
  it('records the new key with the one it replaces, at the time it is given; the old one is retired, the first stays the original', () => {
    const events = decideSecretHashingKey({ type: 'RotateSecretHashingKey', from: a, to: b, now: t0 + 60 }, fold(recordedA));
    expect(events).toEqual([{ type: 'SecretHashingKeyRotated', v: 1, fingerprint: b, previousFingerprint: a, at: t0 + 60 }]);
    const twice = fold([...recordedA, ...events, { type: 'SecretHashingKeyRotated', v: 1, fingerprint: c, previousFingerprint: b, at: t0 + 120 }]);
    expect(twice).toEqual({ status: 'recorded', original: a, current: c, retired: [a, b] });
    expect(knownHashingKeys(twice)).toEqual([a, b, c]);
  });

  it('refuses to rotate from a key that is not the current one, to a key used before, or on a log that records none', () => {
    expect(refusal(rotatedToB, { type: 'RotateSecretHashingKey', from: a, to: c, now: t0 })).toBe('ERR_LOG_HASHING_KEY_MISMATCH');
    expect(refusal(rotatedToB, { type: 'RotateSecretHashingKey', from: b, to: a, now: t0 })).toBe('ERR_LOG_HASHING_KEY_MISMATCH');
    expect(refusal([], { type: 'RotateSecretHashingKey', from: a, to: b, now: t0 })).toBe('ERR_LOG_HASHING_KEY_UNRECORDED');
  });

  it('applying a record twice changes nothing (a process applies its own event, then the log\'s copy)', () => {
    expect(fold([...rotatedToB, ...rotatedToB])).toEqual(fold(rotatedToB));
    expect(fold([...recordedA, { type: 'SecretHashingKeyRecorded', v: 1, fingerprint: stranger, at: t0 + 1 }])).toEqual(fold(recordedA));
  });
});
