import type { SigningKeyEvent, SigningKeyPublished } from '@tessera/events';
import type { EventStore } from '@tessera/event-store';
import { streams } from '@tessera/events';
import { evolveSigningKeys, initialSigningKeysState, type SigningKeysState } from '@tessera/domain';
import { Retry, systemScheduler, type BackoffPolicy, type Cancel, type Clock, type RetryLogger, type Scheduler } from '@tessera/timing';
import { generateSigningKey, signingKeyFromJwk, type KeyFolder, type PrivateJwk, type SigningKey } from '@tessera/tokens';
import { SigningKeyUnavailable } from './issuer-errors.js';

/** All the keyring needs of a store: publishing a key is one append. */
export type KeyPublisher = Pick<EventStore, 'append'>;

export interface KeepKeyOptions {
  /** Epoch seconds. */
  readonly now: () => number;
  /** A key this keyring published: the process's other key sets learn it at once, not on the next poll. */
  readonly onPublished?: (event: SigningKeyEvent) => void;
  /** Where failed publications (retried) and the recovery are logged. */
  readonly logger?: RetryLogger;
  readonly clock?: Clock;
  /** Where the wait between failed attempts runs; default the machine's timers. */
  readonly scheduler?: Scheduler;
  /** Backoff between failed attempts; default 250 ms doubling to 10 s. */
  readonly backoff?: BackoffPolicy;
}

/**
 * Which private key this issuer signs with: the newest published, unretired key whose
 * private half is in this issuer's key folder. Public halves travel as events, so every
 * verifier learns a new key from the log; private halves never leave the folder.
 */
export class SigningKeyring {
  /** The signing-key stream as the domain folds it: the same rules `keys rotate` decides with. */
  private keys: SigningKeysState = initialSigningKeysState();
  private signingKey: SigningKey | undefined;
  /** Epoch seconds each key was published at, for the age of the one this issuer signs with. */
  private readonly publishedAt = new Map<string, number>();
  /** Set while keepKey runs: called whenever the keyring is left with no key to sign with. */
  private onKeyLost: (() => void) | undefined;

  constructor(private readonly folder: KeyFolder) {}

  /** Idempotent: ensureKey applies its own event before the log delivers it again. */
  apply(event: SigningKeyEvent): void {
    this.keys = evolveSigningKeys(this.keys, event);
    if (event.type === 'SigningKeyPublished') this.publishedAt.set(event.kid, event.at);
    if (event.type === 'SigningKeyRetired' && this.signingKey?.kid === event.kid) this.signingKey = undefined;
    this.pickNewest();
    if (!this.signingKey) this.onKeyLost?.();
  }

  current(): SigningKey {
    if (!this.signingKey) throw new SigningKeyUnavailable();
    return this.signingKey;
  }

  /** Epoch seconds the key this issuer signs with was published at; undefined while it has none. */
  currentPublishedAt(): number | undefined {
    return this.signingKey === undefined ? undefined : this.publishedAt.get(this.signingKey.kid);
  }

  get ready(): boolean {
    return this.signingKey !== undefined;
  }

  /**
   * Publishes a key when this issuer has none it can sign with (first start, or a new host).
   * A plain append with `any`, not a command through handleCommand: adding a key decides
   * nothing about the stream, and any issuer may add one at any time.
   */
  async ensureKey(store: KeyPublisher, nowSeconds: number): Promise<SigningKeyEvent | undefined> {
    if (this.signingKey) return undefined;
    const event = await createSigningKey(this.folder, nowSeconds);
    await store.append(streams.signingKeys(), [{ event, metadata: { actor: 'issuer' } }], { expectedRevision: 'any' });
    this.apply(event);
    return event;
  }

  /**
   * From now on (call it once the log has been replayed), whenever this issuer is left without
   * a key it can sign with — `keys rotate --kid` retired its key from another host — publish a
   * new one, as at first start. A failed attempt is retried with capped backoff; meanwhile the
   * issuer is not ready. Returns the function that stops it.
   */
  keepKey(store: KeyPublisher, options: KeepKeyOptions): () => void {
    const publishing = new Retry({
      backoff: options.backoff ?? { initialMs: 250, maxMs: 10_000 },
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.logger ? { log: { logger: options.logger, failing: 'could not publish a new signing key; retrying', recovered: 'published a signing key again' } } : {}),
    });
    let stopped = false;
    let attempting = false;
    const scheduler = options.scheduler ?? systemScheduler;
    let retry: Cancel | undefined;
    const attempt = () => {
      if (stopped || attempting || retry || this.signingKey) return;
      attempting = true;
      this.ensureKey(store, options.now()).then(
        (event) => {
          attempting = false;
          publishing.succeeded();
          if (event) options.onPublished?.(event);
          // Retired again while the append was in flight: go round once more.
          attempt();
        },
        (error: unknown) => {
          attempting = false;
          retry = scheduler.after(publishing.failed(error), () => {
            retry = undefined;
            attempt();
          });
        },
      );
    };
    this.onKeyLost = attempt;
    attempt();
    return () => {
      stopped = true;
      retry?.();
      this.onKeyLost = undefined;
    };
  }


  private pickNewest(): void {
    const { published, retired } = this.keys;
    for (let i = published.length - 1; i >= 0; i -= 1) {
      const kid = published[i]!;
      if (retired.has(kid)) continue;
      if (this.signingKey?.kid === kid) return;
      const privateJwk = this.folder.loadPrivateKey(kid);
      if (privateJwk) {
        this.signingKey = signingKeyFromJwk(kid, privateJwk);
        return;
      }
    }
  }
}

/** Makes a key pair, keeps the private half in the folder, returns the event that publishes the public half. */
export async function createSigningKey(folder: KeyFolder, nowSeconds: number): Promise<SigningKeyEvent> {
  const { event, privateJwk } = await newSigningKeyPair(nowSeconds);
  folder.savePrivateKey(event.kid, privateJwk);
  return event;
}

/**
 * A key pair not yet kept anywhere: the event that publishes its public half, and the private
 * half for the caller to save once it knows the key will be published.
 */
export async function newSigningKeyPair(nowSeconds: number): Promise<{ event: SigningKeyPublished; privateJwk: PrivateJwk }> {
  const { kid, privateJwk } = await generateSigningKey();
  const { kty, crv, x, y } = privateJwk;
  return { event: { type: 'SigningKeyPublished', v: 1, kid, alg: 'ES256', publicJwk: { kty, crv, x, y }, at: nowSeconds }, privateJwk };
}
