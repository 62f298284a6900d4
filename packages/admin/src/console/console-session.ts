import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { SecretHashingKeyUnavailable, type SecretHashers } from '@tessera/tokens';

/**
 * The console's session cookie. `__Host-` makes the browser keep it only as set with Secure and
 * Path=/ and no Domain: pinned to the admin listener's own origin. Path=/ because the console's
 * pages call the admin API (/admin/v1/…) with it, not only /console/.
 */
export const consoleSessionCookie = '__Host-tessera-console';

/** How long a session lasts from its sign-in (never past its admin token's expiry): a working day. */
export const consoleSessionSeconds = 8 * 3600;

/** The HKDF info label the session key is derived under: a key for this purpose alone. */
const sessionKeyLabel = 'tessera admin console session v1';

/** A cookie is at most this long: one longer is not parsed at all. */
const longestCookie = 1024;

/** What a session cookie says, once its signature is checked: the admin token by id, never the token. */
export interface ConsoleSession {
  readonly adminTokenId: string;
  /** Epoch seconds. */
  readonly issuedAt: number;
  /** Epoch seconds: the session ends then, whatever its admin token does. */
  readonly expiresAt: number;
  /** The secret-hashing key the session key was derived from, by fingerprint. */
  readonly keyFingerprint: string;
  /** Random per sign-in: the CSRF token is bound to this one session. */
  readonly nonce: string;
}

/**
 * Stateless sessions: the cookie is its own record, signed with a key every replica holds and nobody
 * else has. That key is derived from the deployment's secret-hashing key (every replica's data folder
 * holds the same one) with HKDF-Expand (RFC 5869), under a label of its own: the secret-hashing
 * key is already a uniformly random 32-byte key, which RFC 5869 section 3.3 says may key the expand
 * step directly. HKDF-Expand(key, info, 32) is HMAC-SHA256(key, info ‖ 0x01), which is what the
 * process's hashers compute over `info + '\x01'`: the key bytes never leave the keyring. A session
 * names the key it was signed under, so a rotation of the secret-hashing key does not end sessions
 * while the retired key is still held.
 */
export class ConsoleSessions {
  constructor(
    private readonly hashers: SecretHashers,
    /** Epoch seconds. */
    private readonly now: () => number,
  ) {}

  /** A new session's cookie value for this admin token, ending at `expiresAt` (epoch seconds). */
  sign(adminTokenId: string, expiresAt: number): { readonly cookie: string; readonly session: ConsoleSession } {
    const keyFingerprint = this.hashers.current().fingerprint;
    const session: ConsoleSession = { adminTokenId, issuedAt: this.now(), expiresAt, keyFingerprint, nonce: randomBytes(16).toString('base64url') };
    const payload = Buffer.from(JSON.stringify({ v: 1, tid: adminTokenId, iat: session.issuedAt, exp: expiresAt, kfp: keyFingerprint, n: session.nonce }), 'utf8').toString('base64url');
    return { cookie: `${payload}.${this.mac(keyFingerprint, `session.${payload}`)}`, session };
  }

  /** The session a cookie value carries, or undefined: malformed, forged, signed under a key not held, or past its end. */
  verify(cookie: string): ConsoleSession | undefined {
    if (cookie.length > longestCookie) return undefined;
    const [payload, signature, ...rest] = cookie.split('.');
    if (payload === undefined || signature === undefined || rest.length > 0) return undefined;
    const session = parsePayload(payload);
    if (session === undefined) return undefined;
    let expected: string;
    try {
      expected = this.mac(session.keyFingerprint, `session.${payload}`);
    } catch (error) {
      // A key this replica does not hold (never, or no longer): the session is not one it can check.
      if (error instanceof SecretHashingKeyUnavailable) return undefined;
      throw error;
    }
    if (!sameText(signature, expected)) return undefined;
    return this.now() < session.expiresAt ? session : undefined;
  }

  /** The synchronizer token of a session: derived from it, so the server keeps nothing and another session's token does not fit. */
  csrfTokenOf(session: ConsoleSession): string {
    return this.mac(session.keyFingerprint, `csrf.${session.adminTokenId}.${session.issuedAt}.${session.nonce}`);
  }

  /** Whether `presented` is the session's synchronizer token, compared in constant time. */
  csrfMatches(session: ConsoleSession, presented: string | undefined): boolean {
    return presented !== undefined && sameText(presented, this.csrfTokenOf(session));
  }

  /** HMAC-SHA256 under the session key derived from the secret-hashing key with this fingerprint. */
  private mac(keyFingerprint: string, text: string): string {
    return createHmac('sha256', this.sessionKey(keyFingerprint)).update(text, 'utf8').digest('base64url');
  }

  /** HKDF-Expand(secret-hashing key, label, 32): HMAC-SHA256(key, label ‖ 0x01), the first and only output block. */
  private sessionKey(keyFingerprint: string): Buffer {
    return Buffer.from(this.hashers.hashUnder(keyFingerprint, `${sessionKeyLabel}\u0001`), 'base64url');
  }
}

function parsePayload(payload: string): ConsoleSession | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  // A JSON object's fields are unknown until checked, one by one, below.
  const { v, tid, iat, exp, kfp, n } = parsed as Record<string, unknown>;
  if (v !== 1 || typeof tid !== 'string' || typeof kfp !== 'string' || typeof n !== 'string') return undefined;
  if (typeof iat !== 'number' || typeof exp !== 'number' || !Number.isSafeInteger(iat) || !Number.isSafeInteger(exp)) return undefined;
  return { adminTokenId: tid, issuedAt: iat, expiresAt: exp, keyFingerprint: kfp, nonce: n };
}

function sameText(presented: string, expected: string): boolean {
  const a = Buffer.from(presented, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
