import { InvalidArgument, accountEventTypes, streams, type AccountEvent, type EventMetadata } from '@tessera/events';
import {
  DomainError,
  accountDecider,
  evolveAccount,
  initialAccountState,
  unsafeNameCharacter,
  type AccountCommand,
  type AccountState,
  type TokenCut,
} from '@tessera/domain';
import { handleCommand, readAllOf, type CommandStore, type EventStore } from '@tessera/event-store';
import {
  newAccountId,
  newApiLoginId,
  newCredentialId,
  newLegacyApiId,
  newLegacyApiKey,
  newTransactionKey,
  type SecretHasher,
} from '@tessera/tokens';
import { validClientKeys, validJwksUrl } from './client-keys.js';
import { InvalidAccountInput } from './invalid-account-input.js';

export interface AccountServiceDeps {
  readonly store: CommandStore & Pick<EventStore, 'readAll'>;
  /** The log's current secret-hashing key: every new hash is made with it and names it. */
  readonly hasher: SecretHasher;
  /** Epoch seconds. */
  readonly now: () => number;
  /** Who changes accounts through this service ('cli', an admin API): written on each event for the audit trail. */
  readonly actor: string;
  /**
   * The longest lifetime (exp − iat, seconds) among the access tokens the log shows that can still be
   * live: how long a cut must be remembered (docs/decisions/0011). Asked only by `revokeTokens`.
   */
  readonly longestTokenLifetime?: () => Promise<number>;
  /** Where the request came from, written on each event beside the actor (an admin API's request id and source address). */
  readonly metadata?: Pick<EventMetadata, 'requestId' | 'sourceAddress'>;
  /**
   * Called with what each command appended, once it is durable and before the operation returns:
   * a server applies a cut to its verifier and waits for its read models to reach the position, so
   * a changed key or permission holds in that process before the answer.
   */
  readonly onAppended?: (appended: { readonly events: readonly AccountEvent[]; readonly position: bigint | undefined }) => Promise<void>;
}

/** Also cut the tokens issued before now (`--revoke-tokens`). */
export interface RevokeTokensOption {
  readonly revokeTokens?: boolean;
}

/** A new account's identifiers and secrets. The secrets exist only here: the log keeps their keyed hashes. */
export interface CreatedAccount {
  readonly accountId: string;
  readonly apiLoginId: string;
  readonly transactionKey: string;
  readonly legacy?: NewLegacyKey;
  readonly permissions: readonly string[];
}

export interface NewLegacyKey {
  readonly apiId: string;
  readonly apiKey: string;
}

/** What `list` shows of an account: never a secret. */
export interface AccountSummary {
  readonly accountId: string;
  readonly name: string;
  readonly permissions: readonly string[];
  readonly apiLoginIds: readonly string[];
  readonly legacyApiIds: readonly string[];
  /** Disabled by an operator (`accounts disable`): it gets no token until enabled. */
  readonly disabled: boolean;
}

export interface AccountChange {
  readonly accountId: string;
  /** The types of the events appended. */
  readonly events: readonly AccountEvent['type'][];
  /** With `revokeTokens`: tokens issued before this time (epoch seconds) are refused. */
  readonly tokensRevokedBefore?: number;
}

/** A permission as an account may hold one: also the admin API's schema, so its document says it. */
export const permissionPattern = /^[A-Za-z0-9:._*-]{1,128}$/;
/** Administrators seldom change one account at the same moment; a few fresh reads settle it. */
const conflictRetries = 3;

/**
 * Account administration: the CLI calls it today, an admin API later. Each operation is one
 * account command through the command handler and returns a plain result; the secrets a
 * result carries are the caller's to show once.
 */
export function createAccountService(deps: AccountServiceDeps) {
  const { store, hasher } = deps;

  const metadataOf = (accountId: string): EventMetadata => ({ ...deps.metadata, accountId, actor: deps.actor });

  async function change(accountId: string, command: (state: Extract<AccountState, { status: 'registered' }>) => AccountCommand) {
    const outcome = await handleCommand(store, {
      stream: streams.account(accountId),
      decider: accountDecider,
      command: (state) => {
        if (state.status !== 'registered') throw new DomainError('ERR_ACCOUNT_NOT_FOUND', `no account ${accountId}`);
        return command(state);
      },
      metadata: metadataOf(accountId),
      onConflict: { retries: conflictRetries },
    });
    await deps.onAppended?.({ events: outcome.events, position: outcome.appended?.position });
    return outcome;
  }

  /** Asked before the command, once: a retry after a conflict decides with the same figure. */
  async function cutOf(option: RevokeTokensOption | undefined): Promise<TokenCut | undefined> {
    if (!option?.revokeTokens) return undefined;
    if (!deps.longestTokenLifetime) throw new InvalidArgument('revokeTokens needs longestTokenLifetime in the account service deps');
    return { longestTokenLifetime: await deps.longestTokenLifetime() };
  }

  async function accountOfLogin(apiLoginId: string): Promise<string> {
    for (const state of (await allAccounts(store)).values()) {
      if (state.status === 'registered' && state.apiCredentials.has(apiLoginId)) return state.accountId;
    }
    throw new DomainError('ERR_ACCOUNT_NOT_FOUND', `no account has API Login ID ${apiLoginId}`);
  }

  return {
    async create(input: { name: string; permissions: readonly string[]; legacy: boolean }): Promise<CreatedAccount> {
      if (input.name.trim() === '' || input.name.length > 200) throw new InvalidAccountInput('name', 'an account name is 1 to 200 characters, not blank');
      if (unsafeNameCharacter.test(input.name)) throw new InvalidAccountInput('name', 'an account name may not hold control characters (escape sequences, line breaks, tabs, bidi overrides)');
      const permissions = validPermissions(input.permissions);
      const accountId = newAccountId();
      const apiLoginId = newApiLoginId();
      const transactionKey = newTransactionKey();
      const legacy = input.legacy ? { apiId: newLegacyApiId(), apiKey: newLegacyApiKey() } : undefined;
      const registered = await handleCommand(store, {
        stream: streams.account(accountId),
        decider: accountDecider,
        command: (): AccountCommand => ({
          type: 'RegisterAccount',
          accountId,
          name: input.name,
          permissions,
          apiCredential: { credentialId: newCredentialId(), apiLoginId, transactionKeyHash: hasher.hash(transactionKey), hashingKey: hasher.fingerprint },
          legacyCredential: legacy && { credentialId: newCredentialId(), apiId: legacy.apiId, apiKeyHash: hasher.hash(legacy.apiKey), hashingKey: hasher.fingerprint },
          now: deps.now(),
        }),
        metadata: metadataOf(accountId),
        // A fresh random id: nothing to read, and nobody else writes there.
        newStream: true,
      });
      await deps.onAppended?.({ events: registered.events, position: registered.appended?.position });
      return { accountId, apiLoginId, transactionKey, ...(legacy ? { legacy } : {}), permissions };
    },

    async list(): Promise<AccountSummary[]> {
      return listAccounts(store);
    },

    /** A new Transaction Key for one API Login ID (the account's first when only the account is named); the old key is refused from then on. */
    /**
     * A new Transaction Key for one API Login ID (the account's first when only the account is named); the
     * old key is refused from then on. With `revokeTokens`, the access tokens issued under it are too.
     */
    async rotateKey(
      target: { accountId?: string; apiLoginId?: string },
      option?: RevokeTokensOption,
    ): Promise<{ accountId: string; apiLoginId: string; transactionKey: string; tokensRevokedBefore?: number }> {
      if (!target.accountId && !target.apiLoginId) throw new InvalidAccountInput('account', 'name the account or the API Login ID whose key to rotate');
      const accountId = target.accountId ?? (await accountOfLogin(target.apiLoginId!));
      const transactionKey = newTransactionKey();
      const revokeTokens = await cutOf(option);
      const { events } = await change(accountId, (state) => {
        const apiLoginId = target.apiLoginId ?? [...state.apiCredentials.keys()][0];
        if (!apiLoginId) throw new DomainError('ERR_CREDENTIAL_NOT_FOUND', `account ${accountId} has no active API Login ID`);
        return { type: 'RotateTransactionKey', apiLoginId, credentialId: newCredentialId(), transactionKeyHash: hasher.hash(transactionKey), hashingKey: hasher.fingerprint, now: deps.now(), revokeTokens };
      });
      const issued = events.find((event) => event.type === 'ApiCredentialIssued');
      return { accountId, apiLoginId: issued!.apiLoginId, transactionKey, ...cutBefore(events) };
    },

    /** With `revokeTokens` the change holds at once: every token of the account issued before now is refused, and clients get new ones with the new scope. */
    async setPermissions(accountId: string, permissions: readonly string[], option?: RevokeTokensOption): Promise<AccountChange> {
      const valid = validPermissions(permissions);
      const revokeTokens = await cutOf(option);
      const { events } = await change(accountId, () => ({ type: 'SetPermissions', permissions: valid, now: deps.now(), revokeTokens }));
      return { accountId, events: events.map((event) => event.type), ...cutBefore(events) };
    },

    /**
     * The RFC 8707 audiences (`resource` values) the account's tokens may be issued for, as a whole
     * set; none leaves only the default audience. Tokens already issued keep theirs.
     */
    async setAudiences(accountId: string, audiences: readonly string[]): Promise<AccountChange> {
      const valid = validAudiences(audiences);
      const { events } = await change(accountId, () => ({ type: 'SetAudiences', audiences: valid, now: deps.now() }));
      return { accountId, events: events.map((event) => event.type) };
    },

    /**
     * Whether the account's token requests must carry a DPoP proof (RFC 9449 section 5.2): when
     * required, a request without one is refused, so every token the account gets is DPoP-bound.
     * Families made before keep their binding, or their lack of one.
     */
    async setClientDpop(accountId: string, dpopBoundAccessTokens: boolean): Promise<AccountChange> {
      const { events } = await change(accountId, () => ({ type: 'SetClientDpop', dpopBoundAccessTokens, now: deps.now() }));
      return { accountId, events: events.map((event) => event.type) };
    },

    /**
     * The public keys (a JWKS) the account's private_key_jwt assertions are checked with, as a whole
     * set; an empty set ends authentication by assertion. Refused whole if any key is private.
     */
    async setClientKeys(accountId: string, jwks: unknown): Promise<AccountChange & { readonly kids: readonly string[] }> {
      const valid = validClientKeys(jwks);
      const { events } = await change(accountId, () => ({ type: 'SetClientKeys', jwks: valid, now: deps.now() }));
      return { accountId, events: events.map((event) => event.type), kids: valid.keys.map((key) => key.kid) };
    },

    /**
     * A URL the account's private_key_jwt keys are fetched from when an assertion needs them,
     * instead of keys on the log; it replaces any keys set before. `plainHttpAllowed`: the egress
     * policy's word on plain http (only to a host TESSERA_EGRESS_ALLOW names).
     */
    async setClientKeysUrl(accountId: string, url: string, options: { readonly plainHttpAllowed?: (url: URL) => boolean } = {}): Promise<AccountChange & { readonly jwksUri: string }> {
      const jwksUri = validJwksUrl(url, options.plainHttpAllowed);
      const { events } = await change(accountId, () => ({ type: 'SetClientKeys', jwks: { keys: [] }, jwksUri, now: deps.now() }));
      return { accountId, events: events.map((event) => event.type), jwksUri };
    },

    async addLegacyKey(accountId: string): Promise<{ accountId: string } & NewLegacyKey> {
      const apiId = newLegacyApiId();
      const apiKey = newLegacyApiKey();
      await change(accountId, () => ({ type: 'AddLegacyCredential', credentialId: newCredentialId(), apiId, apiKeyHash: hasher.hash(apiKey), hashingKey: hasher.fingerprint, now: deps.now() }));
      return { accountId, apiId, apiKey };
    },

    /** v1 tokens already issued under the key live out their lifetime, unless `revokeTokens` refuses them too. */
    async revokeLegacyKey(accountId: string, apiId: string, option?: RevokeTokensOption): Promise<AccountChange> {
      const revokeTokens = await cutOf(option);
      const { events } = await change(accountId, () => ({ type: 'RevokeLegacyCredential', apiId, now: deps.now(), revokeTokens }));
      return { accountId, events: events.map((event) => event.type), ...cutBefore(events) };
    },
  };
}

/** When the cut among these events, if any, starts refusing tokens. */
function cutBefore(events: readonly AccountEvent[]): { tokensRevokedBefore?: number } {
  const cut = events.find((event) => event.type === 'AccountTokensRevoked' || event.type === 'CredentialTokensRevoked');
  return cut ? { tokensRevokedBefore: cut.notBefore } : {};
}

/** Every account, folded from the log. */
async function allAccounts(store: Pick<EventStore, 'readAll'>): Promise<Map<string, AccountState>> {
  const accounts = new Map<string, AccountState>();
  for await (const page of readAllOf(store, accountEventTypes)) {
    for (const { event } of page) accounts.set(event.accountId, evolveAccount(accounts.get(event.accountId) ?? initialAccountState(), event));
  }
  return accounts;
}

/** The accounts as `list` shows them. Reading needs only the log: no hashing key, so a read-only caller opens none. */
export async function listAccounts(store: Pick<EventStore, 'readAll'>): Promise<AccountSummary[]> {
  return [...(await allAccounts(store)).values()].flatMap((state) => accountSummaryOf(state) ?? []);
}

/** An account as `list` shows it; undefined for one not registered. */
export function accountSummaryOf(state: AccountState): AccountSummary | undefined {
  if (state.status !== 'registered') return undefined;
  return {
    accountId: state.accountId,
    name: state.name,
    permissions: [...state.permissions],
    apiLoginIds: [...state.apiCredentials.keys()],
    legacyApiIds: [...state.legacyCredentials.keys()],
    disabled: state.disabled,
  };
}

export type AccountService = ReturnType<typeof createAccountService>;

/**
 * RFC 8707 section 2: a resource is an absolute URI without a fragment. At most 20 per account, so
 * a token request never scans a long list; each at most 512 characters, as the event allows.
 */
function validAudiences(audiences: readonly string[]): readonly string[] {
  if (audiences.length > 20) throw new InvalidAccountInput('audience', `at most 20 audiences per account; got ${audiences.length}`);
  for (const audience of audiences) {
    if (!isResourceIndicator(audience)) throw new InvalidAccountInput('audience', `invalid audience "${audience.slice(0, 80)}": an absolute URI without a fragment (RFC 8707), at most 512 characters`);
  }
  return audiences;
}

/** An absolute URI without a fragment, as RFC 8707 requires of `resource`. */
export function isResourceIndicator(value: string): boolean {
  if (value.length === 0 || value.length > 512 || value.includes('#')) return false;
  try {
    return new URL(value).protocol.length > 1 && /^[a-z][a-z0-9+.-]*:/i.test(value);
  } catch {
    return false;
  }
}

function validPermissions(permissions: readonly string[]): readonly string[] {
  for (const permission of permissions) {
    if (!permissionPattern.test(permission)) throw new InvalidAccountInput('permission', `invalid permission "${permission}": letters, digits and : . _ * - only`);
  }
  return permissions;
}
