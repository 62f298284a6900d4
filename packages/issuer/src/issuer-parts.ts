import { accountEventTypes, signingKeyEventTypes, type FamilyEvent } from '@tessera/contracts';
import { CredentialDirectory } from '@tessera/domain';
import { logReader, type EventStore, type LogReader } from '@tessera/event-store';
import { epochSeconds, type Host } from '@tessera/host';
import { PublicKeySet, openSigningKeyFolder, type SecretHashers } from '@tessera/tokens';
import { egressPolicy } from '@tessera/egress';
import { createAuthenticationFailureCounter, type AuthenticationFailureCounter } from './authentication-failures.js';
import { createClientKeySource } from './client-key-source.js';
import { SigningKeyring } from './signing-keyring.js';
import { createTokenService, type TokenService } from './token-service.js';

export interface IssuerParts {
  readonly tokens: TokenService;
  readonly keyring: SigningKeyring;
  readonly directory: CredentialDirectory;
  /** Public keys for the JWKS this issuer serves. */
  readonly keys: PublicKeySet;
  /** The read models the issuer needs from the log. */
  readonly readers: LogReader[];
  /** Failed credential exchanges, counted per credential per minute for the audit trail. */
  readonly authenticationFailures: AuthenticationFailureCounter;
  /** Epoch seconds, from the host's clock. */
  readonly now: () => number;
  /** The log's secret-hashing keys: what the token endpoint's DPoP nonces are keyed with too. */
  readonly hashers: SecretHashers;
}

/**
 * What the issuer takes of the region module, when the process has a region: the region new
 * families are homed in (their ids prefixed with it), and its families revoked in another region,
 * folded into refresh decisions (docs/decisions/0018).
 */
export interface IssuerRegion {
  readonly own: string;
  readonly isRevokedElsewhere: (familyId: string) => boolean;
}

/**
 * The issuer's in-memory state and operations over one store and key folder, hashing with the
 * process's secret-hashing keys (`wireSecretHashing`), in the region `hooks.region` names (none:
 * one region, bare family ids). In the all-in-one
 * the verifier already folds account and key events: `shared` hands its read models over, so
 * one process does not keep the same derived state twice.
 */
export function createIssuerParts(
  host: Pick<Host, 'config' | 'clock' | 'log'>,
  store: EventStore,
  hashers: SecretHashers,
  hooks: {
    onFamilyEvent?: ((event: FamilyEvent) => void) | undefined;
    shared?: { directory: CredentialDirectory; keys: PublicKeySet } | undefined;
    region?: IssuerRegion | undefined;
  } = {},
): IssuerParts {
  const { config } = host;
  const now = () => epochSeconds(host.clock);
  const signing = openSigningKeyFolder(config.TESSERA_DATA_DIR, config.TESSERA_KEYS_DIR);
  const directory = hooks.shared?.directory ?? new CredentialDirectory();
  const keyring = new SigningKeyring(signing);
  const keys = hooks.shared?.keys ?? new PublicKeySet();
  const authenticationFailures = createAuthenticationFailureCounter({ store, now });
  const { region } = hooks;
  const tokens = createTokenService({
    store,
    directory,
    keyring,
    hashers,
    issuer: config.TESSERA_ISSUER,
    lifetimes: {
      accessTokenSeconds: config.TESSERA_ACCESS_TOKEN_TTL,
      refreshTokenSeconds: config.TESSERA_REFRESH_TOKEN_TTL,
      legacyTokenSeconds: config.TESSERA_LEGACY_TOKEN_TTL,
    },
    now,
    onFamilyEvent: hooks.onFamilyEvent,
    refreshReuse: config.TESSERA_REFRESH_REUSE,
    region: region?.own,
    onAuthenticationFailure: (failure) => authenticationFailures.record(failure),
    ...(region ? { isRevokedElsewhere: region.isRevokedElsewhere } : {}),
    // Clients' JWKS URLs are reached through the process's one egress policy (TESSERA_EGRESS_ALLOW).
    clientKeySource: createClientKeySource({ fetch: egressPolicy(config).fetch, clock: host.clock, log: host.log }),
  });
  const readers: LogReader[] = [logReader(signingKeyEventTypes, ({ event }) => keyring.apply(event))];
  if (!hooks.shared) {
    readers.push(
      logReader(accountEventTypes, ({ event }) => directory.apply(event)),
      logReader(signingKeyEventTypes, ({ event }) => keys.apply(event)),
    );
  }
  return { tokens, keyring, directory, keys, readers, authenticationFailures, now, hashers };
}
