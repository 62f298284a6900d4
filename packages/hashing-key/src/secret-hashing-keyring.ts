import type { SecretHashingKeyEvent } from '@tessera/events';
import { evolveSecretHashingKey, initialSecretHashingKeyState, knownHashingKeys, type SecretHashingKeyState } from '@tessera/domain';
import { systemClock, type Clock } from '@tessera/timing';
import {
  createSecretHasher,
  readHashingKeys,
  retiredHashingKeyFile,
  SecretHashingKeyUnavailable,
  type HeldHashingKeys,
  type SecretHasher,
  type SecretHashers,
} from '@tessera/tokens';

/** A key the log names that is not on disk is looked for again at most this often when a request needs it. */
const rereadAtMostEveryMs = 1000;

/**
 * A long-running writer's secret-hashing keys: the log says which key is current (it follows the
 * log's `secrethashingkey` stream), the data folder holds the keys. New hashes are made only with
 * the current key: when the log has rotated to a key this host does not have, nothing is hashed
 * (SecretHashingKeyUnavailable, a 503) and `missing()` names the file, until it is there. Old
 * hashes are checked with the key each names, retired or not.
 */
export class SecretHashingKeyring implements SecretHashers {
  #state: SecretHashingKeyState = initialSecretHashingKeyState();
  #held: HeldHashingKeys;
  #readAtMs: number;
  readonly #hashers = new Map<string, SecretHasher>();
  readonly #clock: Clock;

  constructor(
    private readonly folder: { readonly dataDir: string; readonly keysDir?: string | undefined },
    options: { readonly clock?: Clock } = {},
  ) {
    this.#clock = options.clock ?? systemClock;
    this.#held = readHashingKeys(folder.dataDir, folder.keysDir);
    this.#readAtMs = this.#clock.now();
  }

  /**
   * The log's record, as the check before the first append left it. The follower of the log may
   * have applied a later record already: a record only grows, so the one that knows more keys wins.
   */
  seed(state: SecretHashingKeyState): void {
    if (knownHashingKeys(state).length <= knownHashingKeys(this.#state).length) return;
    this.#state = state;
    if (!this.holdsCurrent()) this.reread();
  }

  /** A record of the log, in log order; a rotation to a key not read yet reads the folder again at once. */
  apply(event: SecretHashingKeyEvent): void {
    this.#state = evolveSecretHashingKey(this.#state, event);
    if (!this.holdsCurrent()) this.reread();
  }

  /** Reads the data folder's key files again; true once the current key is among them. */
  reread(): boolean {
    this.#readAtMs = this.#clock.now();
    try {
      this.#held = readHashingKeys(this.folder.dataDir, this.folder.keysDir);
    } catch {
      // A folder that cannot be read now keeps the keys read before; missing() still says what is absent.
    }
    return this.holdsCurrent();
  }

  /** The fingerprint new hashes are made with, once the log has been checked. */
  get currentFingerprint(): string | undefined {
    return this.#state.status === 'recorded' ? this.#state.current : undefined;
  }

  /** Why no new hash can be made now, for /readyz; undefined when one can. */
  missing(): string | undefined {
    const state = this.#state;
    if (state.status === 'unrecorded') return 'the secret-hashing key is not checked against the log yet';
    if (this.holdsCurrent()) return undefined;
    return (
      `the log's secret-hashing key is now ${state.current}, which is not in this data folder: copy keys/secret-hashing.key of the data folder ` +
      `tessera keys rotate-hashing ran in to ${retiredHashingKeyFile(this.folder.dataDir, state.current)}`
    );
  }

  current(): SecretHasher {
    const fingerprint = this.currentFingerprint;
    const hasher = fingerprint === undefined ? undefined : this.hasherOf(fingerprint);
    if (!hasher) throw new SecretHashingKeyUnavailable(this.missing() ?? 'no current secret-hashing key');
    return hasher;
  }

  hashUnder(fingerprint: string | undefined, secret: string): string {
    const named = fingerprint ?? (this.#state.status === 'recorded' ? this.#state.original : undefined);
    if (named === undefined) throw new SecretHashingKeyUnavailable('the secret-hashing key is not checked against the log yet');
    let hasher = this.hasherOf(named);
    if (!hasher && this.#clock.now() - this.#readAtMs >= rereadAtMostEveryMs) {
      this.reread();
      hasher = this.hasherOf(named);
    }
    if (!hasher) throw new SecretHashingKeyUnavailable(`the secret-hashing key ${named} a stored hash was made with is not in this data folder (${retiredHashingKeyFile(this.folder.dataDir, named)})`);
    return hasher.hash(secret);
  }

  decoy(secret: string): string {
    const any = this.hasherOf(this.currentFingerprint ?? '') ?? [...this.#held.byFingerprint.keys()].map((fingerprint) => this.hasherOf(fingerprint)).find(Boolean);
    if (!any) throw new SecretHashingKeyUnavailable('no secret-hashing key in this data folder');
    return any.hash(secret);
  }

  private holdsCurrent(): boolean {
    const fingerprint = this.currentFingerprint;
    return fingerprint !== undefined && this.#held.byFingerprint.has(fingerprint);
  }

  private hasherOf(fingerprint: string): SecretHasher | undefined {
    const cached = this.#hashers.get(fingerprint);
    if (cached) return cached;
    const held = this.#held.byFingerprint.get(fingerprint);
    if (!held) return undefined;
    const hasher = createSecretHasher(held.key);
    this.#hashers.set(fingerprint, hasher);
    return hasher;
  }
}
