import { accountEventTypes, signingKeyEventTypes, type AccountEvent, type SigningKeyEvent } from '@tessera/contracts';
import type { TesseraConfig } from '@tessera/config';
import { CredentialDirectory } from '@tessera/domain';
import { followLog, type EventStore, type GuardedEventStore, type LogReader, type ResilientSubscription } from '@tessera/event-store';
import { SigningKeyring, createTokenService, type TokenService } from '@tessera/issuer';
import { PublicKeySet, createSecretHasher, openKeyFolders } from '@tessera/tokens';
import { createBearerVerifier, type BearerVerifier, type RevocationCheck } from '@tessera/verification';
import { createVerifierState, type VerifierState } from '@tessera/verifier';

export const nowSeconds = () => Math.floor(Date.now() / 1000);

export interface IssuerParts {
  readonly tokens: TokenService;
  readonly keyring: SigningKeyring;
  readonly directory: CredentialDirectory;
  /** Public keys for the JWKS this issuer serves. */
  readonly keys: PublicKeySet;
  readonly readers: LogReader[];
}

/**
 * The issuer's in-memory state and operations over one store and key folder. In the all-in-one
 * the verifier already folds account and key events: `shared` hands its read models over, so
 * one process does not keep the same derived state twice.
 */
export function createIssuerParts(
  config: TesseraConfig,
  store: EventStore,
  hooks: { onFamilyEvent?: VerifierState['applyFamilyEvent']; shared?: { directory: CredentialDirectory; keys: PublicKeySet } } = {},
): IssuerParts {
  const { signing, hashingKey } = openKeyFolders(config.TESSERA_DATA_DIR, config.TESSERA_KEYS_DIR);
  const hasher = createSecretHasher(hashingKey);
  const directory = hooks.shared?.directory ?? new CredentialDirectory();
  const keyring = new SigningKeyring(signing);
  const keys = hooks.shared?.keys ?? new PublicKeySet();
  const tokens = createTokenService({
    store,
    directory,
    keyring,
    hasher,
    issuer: config.TESSERA_ISSUER,
    lifetimes: {
      accessTokenSeconds: config.TESSERA_ACCESS_TOKEN_TTL,
      refreshTokenSeconds: config.TESSERA_REFRESH_TOKEN_TTL,
      legacyTokenSeconds: config.TESSERA_LEGACY_TOKEN_TTL,
    },
    now: nowSeconds,
    onFamilyEvent: hooks.onFamilyEvent,
  });
  const readers: LogReader[] = [{ types: signingKeyEventTypes, apply: ({ event }) => keyring.apply(event as SigningKeyEvent) }];
  if (!hooks.shared) {
    readers.push(
      { types: accountEventTypes, apply: ({ event }) => directory.apply(event as AccountEvent) },
      { types: signingKeyEventTypes, apply: ({ event }) => keys.apply(event as SigningKeyEvent) },
    );
  }
  return { tokens, keyring, directory, keys, readers };
}

export interface VerifierParts {
  readonly state: VerifierState;
  readonly bearer: BearerVerifier;
  readonly stopForgetting: () => void;
  /** Where to look for signing keys when a token names an unknown kid. */
  useKeyRefresh(refresh: () => Promise<void>): void;
  /** Switches revocation checks to another source (Kafka) instead of the log-fed projection. */
  useRevocationSource(source: RevocationCheck & { stats(): { entries: number } }): void;
  entries(): number;
}

export function createVerifierParts(config: TesseraConfig): VerifierParts {
  const state = createVerifierState({ clockSkewSeconds: config.TESSERA_CLOCK_SKEW });
  // Before the rebuild: rotations and revocations whose tokens have all expired are then not stored.
  state.projection.forgetExpired(nowSeconds());
  let source: RevocationCheck & { stats?: () => { entries: number } } = state.projection;
  let refreshKeys: (() => Promise<void>) | undefined;
  const bearer = createBearerVerifier({
    keys: state.keys,
    projection: { isRejected: (familyId, generation) => source.isRejected(familyId, generation) },
    issuer: config.TESSERA_ISSUER,
    now: nowSeconds,
    clockSkewSeconds: config.TESSERA_CLOCK_SKEW,
    refreshKeys: () => refreshKeys?.() ?? Promise.resolve(),
  });
  // Entries that can no longer reject an unexpired token are dropped every few seconds.
  const timer = setInterval(() => state.projection.forgetExpired(nowSeconds()), 5_000);
  timer.unref();
  return {
    state,
    bearer,
    stopForgetting: () => clearInterval(timer),
    useKeyRefresh: (refresh) => {
      refreshKeys = refresh;
    },
    useRevocationSource: (next) => {
      source = next;
    },
    entries: () => source.stats?.().entries ?? state.projection.size,
  };
}

/**
 * Follows the log into every read model; ready once caught up. Where to start may itself need
 * the store (the revocation window), so it is asked for only when the follower starts.
 */
export function startFollowing(store: GuardedEventStore, readers: LogReader[], onError: (error: unknown) => void, startAfter?: () => Promise<bigint | undefined>) {
  let subscription: ResilientSubscription | undefined;
  let closed = false;
  const whenCaughtUp = (startAfter ? startAfter() : Promise.resolve(undefined)).then(async (after) => {
    if (closed) return;
    subscription = followLog(store, readers, onError, { after });
    await subscription.caughtUp;
  });
  return {
    whenCaughtUp,
    /** Open and caught up since the last (re)connection. */
    live: () => subscription?.live() ?? false,
    lastPosition: () => subscription?.lastPosition(),
    close: async () => {
      closed = true;
      await subscription?.close();
    },
  };
}
