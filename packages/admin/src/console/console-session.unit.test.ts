import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecretHasher, singleKeyHashers } from '@tessera/tokens';
import { ConsoleSessions } from './console-session.js';

const key = Buffer.alloc(32, 7);
const now = 1_800_000_000;
const sessions = (at: () => number = () => now, hashingKey: Buffer = key) => new ConsoleSessions(singleKeyHashers(createSecretHasher(hashingKey)), at);

describe('console sessions', () => {
  it('a signed cookie verifies to its admin token id and end on another replica with the same secret-hashing key, and holds no token', () => {
    const { cookie, session } = sessions().sign('adm_1', now + 3600);
    expect(session).toMatchObject({ adminTokenId: 'adm_1', issuedAt: now, expiresAt: now + 3600 });
    // Another process, the same key: a replica.
    expect(sessions().verify(cookie)).toEqual(session);
    expect(Buffer.from(cookie.split('.')[0]!, 'base64url').toString('utf8')).not.toMatch(/tsa_/);
  });

  it('is signed with HKDF-Expand(secret-hashing key, its label, 32), not with the secret-hashing key itself', () => {
    const { cookie } = sessions().sign('adm_1', now + 3600);
    const [payload, signature] = cookie.split('.');
    const sessionKey = createHmac('sha256', key).update('tessera admin console session v1\u0001').digest();
    expect(signature).toBe(createHmac('sha256', sessionKey).update(`session.${payload}`).digest('base64url'));
    expect(signature).not.toBe(createHmac('sha256', key).update(`session.${payload}`).digest('base64url'));
  });

  it('refuses a cookie signed under another key, a changed payload, a changed signature, garbage, and one past its end', () => {
    const { cookie } = sessions().sign('adm_1', now + 3600);
    expect(sessions(() => now, Buffer.alloc(32, 8)).verify(cookie)).toBeUndefined();
    const [payload, signature] = cookie.split('.') as [string, string];
    const widened = Buffer.from(Buffer.from(payload, 'base64url').toString('utf8').replace('"adm_1"', '"adm_2"')).toString('base64url');
    expect(sessions().verify(`${widened}.${signature}`)).toBeUndefined();
    expect(sessions().verify(`${payload}.${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`)).toBeUndefined();
    expect(sessions().verify('not-a-session')).toBeUndefined();
    expect(sessions().verify(`${payload}.${signature}.more`)).toBeUndefined();
    expect(sessions(() => now + 3599).verify(cookie)).toBeDefined();
    expect(sessions(() => now + 3600).verify(cookie)).toBeUndefined();
  });

  it("binds the CSRF token to the one session: another sign-in of the same admin token has another", () => {
    const signer = sessions();
    const first = signer.sign('adm_1', now + 3600).session;
    const second = signer.sign('adm_1', now + 3600).session;
    expect(signer.csrfMatches(first, signer.csrfTokenOf(first))).toBe(true);
    expect(signer.csrfMatches(second, signer.csrfTokenOf(first))).toBe(false);
    expect(signer.csrfMatches(first, undefined)).toBe(false);
    expect(signer.csrfMatches(first, '')).toBe(false);
  });
});
