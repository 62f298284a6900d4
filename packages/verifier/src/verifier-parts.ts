import { epochSeconds, tokenIssuers, type Host } from '@tessera/host';
import { createBearerVerifier, type BearerVerifier, type RevocationCheck } from '@tessera/verification';
import { createVerifierState, type VerifierState } from './verifier-state.js';

export interface VerifierParts {
  readonly state: VerifierState;
  readonly bearer: BearerVerifier;
  readonly stopForgetting: () => void;
  /** Where to look for signing keys when a token names an unknown kid. */
  useKeyRefresh(refresh: () => Promise<void>): void;
  /** Switches revocation checks to another source (Kafka) instead of the log-fed projection. */
  useRevocationSource(source: RevocationCheck & { stats(): { entries: number } }): void;
  /**
   * With another source in use (Kafka), also reject what the in-memory projection rejects: the
   * mirrored regions' revocations land there. Either saying "rejected" is enough.
   */
  alsoConsultLocalProjection(): void;
  entries(): number;
}

export function createVerifierParts(host: Pick<Host, 'config' | 'clock' | 'listeners' | 'role' | 'scheduler'>): VerifierParts {
  const { config } = host;
  const nowSeconds = () => epochSeconds(host.clock);
  const state = createVerifierState({ clockSkewSeconds: config.TESSERA_CLOCK_SKEW });
  // Before the rebuild: rotations and revocations whose tokens have all expired are then not stored.
  state.projection.forgetExpired(nowSeconds());
  let source: RevocationCheck & { stats?: () => { entries: number } } = state.projection;
  let refreshKeys: (() => Promise<void>) | undefined;
  const bearer = createBearerVerifier({
    keys: state.keys,
    projection: {
      isRejected: (familyId, generation) => source.isRejected(familyId, generation),
      isCutOff: (token) => source.isCutOff?.(token) === true,
    },
    issuer: tokenIssuers(host).accepted,
    now: nowSeconds,
    clockSkewSeconds: config.TESSERA_CLOCK_SKEW,
    refreshKeys: () => refreshKeys?.() ?? Promise.resolve(),
  });
  // Entries that can no longer reject an unexpired token are dropped every few seconds.
  const stopForgetting = host.scheduler.every(5_000, () => state.projection.forgetExpired(nowSeconds()));
  return {
    state,
    bearer,
    stopForgetting,
    useKeyRefresh: (refresh) => {
      refreshKeys = refresh;
    },
    useRevocationSource: (next) => {
      source = next;
    },
    alsoConsultLocalProjection: () => {
      const other = source;
      if (other === state.projection) return;
      source = {
        isRejected: (familyId, generation) => other.isRejected(familyId, generation) || state.projection.isRejected(familyId, generation),
        isCutOff: (token) => other.isCutOff?.(token) === true || state.projection.isCutOff(token),
        stats: () => ({ entries: (other.stats?.().entries ?? 0) + state.projection.size }),
      };
    },
    entries: () => source.stats?.().entries ?? state.projection.size,
  };
}
