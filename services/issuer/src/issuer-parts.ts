import { accountEventTypes, signingKeyEventTypes, type AccountEvent, type FamilyEvent, type SigningKeyEvent } from '@tessera/contracts';
import type { TesseraConfig } from '@tessera/config';
import { CredentialDirectory } from '@tessera/domain';
import type { EventStore, LogReader } from '@tessera/event-store';
import { PublicKeySet, createSecretHasher, openKeyFolders } from '@tessera/tokens';
import { createAuthenticationFailureCounter, type AuthenticationFailureCounter } from './authentication-failures.js';
import { SigningKeyring } from './signing-keyring.js';
import { createTokenService, type TokenService } from './token-service.js';

export const nowSeconds = () => Math.floor(Date.now() / 1000);

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
}

/**
 * The issuer's in-memory state and operations over one store and key folder. In the all-in-one
 * the verifier already folds account and key events: `shared` hands its read models over, so
 * one process does not keep the same derived state twice.
 */
export function createIssuerParts(
  config: TesseraConfig,
  store: EventStore,
  hooks: { onFamilyEvent?: ((event: FamilyEvent) => void) | undefined; shared?: { directory: CredentialDirectory; keys: PublicKeySet } | undefined } = {},
): IssuerParts {
  const { signing, hashingKey } = openKeyFolders(config.TESSERA_DATA_DIR, config.TESSERA_KEYS_DIR);
  const hasher = createSecretHasher(hashingKey);
  const directory = hooks.shared?.directory ?? new CredentialDirectory();
  const keyring = new SigningKeyring(signing);
  const keys = hooks.shared?.keys ?? new PublicKeySet();
  const authenticationFailures = createAuthenticationFailureCounter({ store, now: nowSeconds });
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
    refreshReuse: config.TESSERA_REFRESH_REUSE,
    region: config.TESSERA_REGION,
    onAuthenticationFailure: (failure) => authenticationFailures.record(failure),
  });
  const readers: LogReader[] = [{ types: signingKeyEventTypes, apply: ({ event }) => keyring.apply(event as SigningKeyEvent) }];
  if (!hooks.shared) {
    readers.push(
      { types: accountEventTypes, apply: ({ event }) => directory.apply(event as AccountEvent) },
      { types: signingKeyEventTypes, apply: ({ event }) => keys.apply(event as SigningKeyEvent) },
    );
  }
  return { tokens, keyring, directory, keys, readers, authenticationFailures };
}
