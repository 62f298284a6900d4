import { InvalidArgument, adminScopes, adminTokenEventTypes, isOneOf, streams, type AdminScope, type EventMetadata } from '@tessera/events';
import { adminTokenDecider, unsafeNameCharacter, type AdminTokenCommand } from '@tessera/domain';
import { handleCommand, readAllOf, type CommandStore, type EventStore } from '@tessera/event-store';
import { newAdminToken, newAdminTokenId, type SecretHasher } from '@tessera/tokens';
import { InvalidAdminTokenInput } from './invalid-admin-token-input.js';

export interface AdminTokenServiceDeps {
  readonly store: CommandStore;
  /** Needed by `create` alone: `revoke` works on a log with no hashing key at hand. */
  readonly hasher?: SecretHasher;
  /** Epoch seconds. */
  readonly now: () => number;
  /** Who manages admin tokens through this service ('cli'): written on each event for the audit trail. */
  readonly actor: string;
}

/** A new admin token. The token exists only here: the log keeps its keyed hash. */
export interface CreatedAdminToken {
  readonly id: string;
  readonly adminToken: string;
  readonly name: string;
  readonly scopes: readonly AdminScope[];
  /** Epoch seconds; undefined: it never expires. */
  readonly expiresAt: number | undefined;
}

/** What `list` shows of an admin token: never the token or its hash. */
export interface AdminTokenSummary {
  readonly id: string;
  readonly name: string;
  readonly scopes: readonly string[];
  /** Epoch seconds. */
  readonly createdAt: number;
  /** Epoch seconds; undefined when it never expires. */
  readonly expiresAt: number | undefined;
  /** Epoch seconds; undefined unless it was revoked. */
  readonly revokedAt: number | undefined;
}

export interface RevokedAdminToken {
  readonly id: string;
  readonly revokedAt: number;
  /** Revoked before this call: nothing was appended. */
  readonly alreadyRevoked: boolean;
}

/**
 * Admin tokens for /admin/v1/*: the CLI calls it. Each operation is one command on the token's own
 * stream through the command handler.
 */
export function createAdminTokenService(deps: AdminTokenServiceDeps) {
  const { store, hasher } = deps;
  const metadata: EventMetadata = { actor: deps.actor };

  return {
    /** `expiresInSeconds`: the token is refused that long after now; without it, it never expires. */
    async create(input: { name: string; scopes: readonly string[]; expiresInSeconds?: number | undefined }): Promise<CreatedAdminToken> {
      if (!hasher) throw new InvalidArgument('creating an admin token needs the hasher in the admin token service deps');
      const name = validName(input.name);
      const scopes = validScopes(input.scopes);
      const lifetime = input.expiresInSeconds === undefined ? undefined : validLifetime(input.expiresInSeconds);
      const id = newAdminTokenId();
      const adminToken = newAdminToken();
      const now = deps.now();
      const expiresAt = lifetime === undefined ? undefined : now + lifetime;
      await handleCommand(store, {
        stream: streams.adminToken(id),
        decider: adminTokenDecider,
        command: (): AdminTokenCommand => ({ type: 'IssueAdminToken', adminTokenId: id, name, scopes, tokenHash: hasher.hash(adminToken), hashingKey: hasher.fingerprint, now, expiresAt }),
        metadata,
        // A fresh random id: nothing to read, and nobody else writes there.
        newStream: true,
      });
      return { id, adminToken, name, scopes, expiresAt };
    },

    /**
     * An admin token the operator made (TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE): registered as `create`
     * registers its own, its keyed hash only, without an expiry. The token is the caller's; it is
     * never returned, so nothing can print it.
     */
    async register(input: { name: string; scopes: readonly string[]; adminToken: string }): Promise<{ readonly id: string; readonly scopes: readonly AdminScope[]; readonly position: bigint | undefined }> {
      if (!hasher) throw new InvalidArgument('registering an admin token needs the hasher in the admin token service deps');
      const name = validName(input.name);
      const scopes = validScopes(input.scopes);
      const adminToken = validOperatorToken(input.adminToken);
      const id = newAdminTokenId();
      const now = deps.now();
      const { appended } = await handleCommand(store, {
        stream: streams.adminToken(id),
        decider: adminTokenDecider,
        command: (): AdminTokenCommand => ({ type: 'IssueAdminToken', adminTokenId: id, name, scopes, tokenHash: hasher.hash(adminToken), hashingKey: hasher.fingerprint, now, expiresAt: undefined }),
        metadata,
        newStream: true,
      });
      return { id, scopes, position: appended?.position };
    },

    /** Refused from then on by every process that follows the log; revoking twice changes nothing. */
    async revoke(id: string): Promise<RevokedAdminToken> {
      const { events, state } = await handleCommand(store, {
        stream: streams.adminToken(id),
        decider: adminTokenDecider,
        command: (): AdminTokenCommand => ({ type: 'RevokeAdminToken', now: deps.now() }),
        metadata,
        onConflict: { retries: 3 },
      });
      // The decider refuses an unknown token, so the state is revoked here.
      const revokedAt = state.status === 'revoked' ? state.revokedAt : deps.now();
      return { id, revokedAt, alreadyRevoked: events.length === 0 };
    },
  };
}

export type AdminTokenService = ReturnType<typeof createAdminTokenService>;

/** Every admin token, folded from the log. Reading needs only the log: no hashing key. */
export async function listAdminTokens(store: Pick<EventStore, 'readAll'>): Promise<AdminTokenSummary[]> {
  const tokens = new Map<string, AdminTokenSummary>();
  for await (const page of readAllOf(store, adminTokenEventTypes)) {
    for (const { event } of page) {
      if (event.type === 'AdminTokenIssued') {
        tokens.set(event.adminTokenId, { id: event.adminTokenId, name: event.name, scopes: event.scopes, createdAt: event.at, expiresAt: event.expiresAt, revokedAt: undefined });
      } else {
        const token = tokens.get(event.adminTokenId);
        if (token) tokens.set(token.id, { ...token, revokedAt: event.at });
      }
    }
  }
  return [...tokens.values()];
}

function validName(name: string): string {
  if (name.trim() === '' || name.length > 200) throw new InvalidAdminTokenInput('name', 'an admin token name is 1 to 200 characters, not blank');
  if (unsafeNameCharacter.test(name)) throw new InvalidAdminTokenInput('name', 'an admin token name may not hold control characters (escape sequences, line breaks, tabs, bidi overrides)');
  return name;
}

/**
 * The shortest admin token an operator may make: 43 characters is 32 random bytes in base64url,
 * as `admin-tokens create` makes them. Visible ASCII without spaces, as an Authorization header carries it.
 */
export const minOperatorTokenLength = 43;

/** `token` when an operator-made admin token may be it; else InvalidAdminTokenInput saying what one is (never repeating it). */
export function validOperatorToken(token: string): string {
  if (token.length < minOperatorTokenLength || token.length > 512 || !/^[\x21-\x7e]+$/.test(token)) {
    throw new InvalidAdminTokenInput('admin-token', `an admin token is ${minOperatorTokenLength} to 512 visible ASCII characters without spaces (e.g. 32 random bytes in base64url, or what openssl rand -base64 32 prints)`);
  }
  return token;
}

/** Ten years: past that an expiry is a typo, not a plan. */
export const maxAdminTokenLifetimeSeconds = 10 * 365 * 86_400;

function validLifetime(seconds: number): number {
  if (!Number.isSafeInteger(seconds) || seconds < 1 || seconds > maxAdminTokenLifetimeSeconds) {
    throw new InvalidAdminTokenInput('expires-in', `an admin token's lifetime is a whole number of seconds from 1 to ${maxAdminTokenLifetimeSeconds} (ten years)`);
  }
  return seconds;
}

function validScopes(scopes: readonly string[]): AdminScope[] {
  if (scopes.length === 0) throw new InvalidAdminTokenInput('scope', `an admin token needs at least one scope: ${adminScopes.join(', ')}`);
  const valid = new Set<AdminScope>();
  for (const scope of scopes) {
    if (!isAdminScope(scope)) throw new InvalidAdminTokenInput('scope', `unknown scope "${scope}"; one of: ${adminScopes.join(', ')}`);
    valid.add(scope);
  }
  return [...valid];
}

export function isAdminScope(scope: string): scope is AdminScope {
  return isOneOf(adminScopes, scope);
}
