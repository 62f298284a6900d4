import { InvariantBroken, streams } from '@tessera/events';
import { DomainError, secretHashingKeyDecider, type SecretHashingKeyState } from '@tessera/domain';
import { handleCommand, type CommandStore } from '@tessera/event-store';
import {
  installHashingKey,
  keepHashingKey,
  newHashingKey,
  removeKeptHashingKey,
  secretHashingKeyFingerprint,
  type HeldHashingKey,
} from '@tessera/tokens';
import { LogHashingKeyRefusal } from './log-hashing-key-refusal.js';

export interface HashingKeyRotation {
  readonly fingerprint: string;
  readonly previousFingerprint: string;
  /** The log's record after the rotation. */
  readonly state: Extract<SecretHashingKeyState, { status: 'recorded' }>;
}

/**
 * `keys rotate-hashing`: a new secret-hashing key, recorded on the log. Both keys are on disk
 * before the log names the new one (the old one kept as `secret-hashing.<fingerprint>.key`, the
 * new one under its fingerprint too), so a process sharing this data folder that reads the
 * rotation finds its key, and a crash at any step leaves every key the log names on disk. Once
 * recorded, the new key becomes `secret-hashing.key`.
 */
export async function rotateHashingKey(
  store: CommandStore,
  options: { readonly dataDir: string; readonly current: HeldHashingKey; readonly now: number },
): Promise<HashingKeyRotation> {
  const next = newHashingKey();
  const fingerprint = secretHashingKeyFingerprint(next);
  let kept = false;
  let state: SecretHashingKeyState;
  try {
    ({ state } = await handleCommand(store, {
      stream: streams.secretHashingKey(),
      decider: secretHashingKeyDecider,
      command: () => ({ type: 'RotateSecretHashingKey' as const, from: options.current.fingerprint, to: fingerprint, now: options.now }),
      metadata: { actor: 'cli' },
      beforeAppend: () => {
        keepHashingKey(options.dataDir, options.current.key);
        keepHashingKey(options.dataDir, next);
        kept = true;
      },
    }));
  } catch (error) {
    // Never recorded: the new key made no hash and is not kept.
    if (kept) removeKeptHashingKey(options.dataDir, fingerprint);
    if (error instanceof DomainError && (error.code === 'ERR_LOG_HASHING_KEY_MISMATCH' || error.code === 'ERR_LOG_HASHING_KEY_UNRECORDED')) {
      throw new LogHashingKeyRefusal(error.code, `the log's secret-hashing key changed while rotating (${error.message}): run the command again; nothing was written`);
    }
    throw error;
  }
  installHashingKey(options.dataDir, next);
  removeKeptHashingKey(options.dataDir, fingerprint);
  if (state.status !== 'recorded') throw new InvariantBroken('a rotation left the log with no secret-hashing key recorded');
  return { fingerprint, previousFingerprint: options.current.fingerprint, state };
}
