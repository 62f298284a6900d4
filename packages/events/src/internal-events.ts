import { z } from 'zod';
import { AccountTokensRevoked, CredentialTokensRevoked, eventFields, TokenRevoked } from '@tessera/contracts';

/**
 * The events Tessera writes to its log and never publishes: read by its own services (the audit
 * trail, the admin API, the Shared Signals transmitter, archiving) and nobody else. Changing one
 * changes no public API; like every event, each is versioned by `type` + `v`.
 */

const { epochSeconds, id, keyedHash, keyFingerprint, hashingKey } = eventFields;

export const LegacyTokenIssued = z.object({
  type: z.literal('LegacyTokenIssued'),
  v: z.literal(1),
  accountId: id,
  credentialId: id,
  apiId: id,
  jti: id,
  issuedAt: epochSeconds,
  expiresAt: epochSeconds,
});

/**
 * Failed authentications are audited as counts, never one event per failure, so an attacker
 * cannot fill the disk: one event per credential per minute, and one per minute for every
 * attempt that named no known credential (whose presented id is not kept: it may be a secret
 * pasted into the wrong field).
 */
export const AuthenticationFailuresCounted = z.object({
  type: z.literal('AuthenticationFailuresCounted'),
  v: z.literal(1),
  interface: z.enum(['v5', 'v1']),
  /** Absent for attempts that named no known credential. */
  accountId: id.optional(),
  credentialId: id.optional(),
  /** The API Login ID (v5) or API ID (v1) the attempts named, when it is a known one. */
  clientId: id.optional(),
  /** Epoch seconds at the start of the minute counted. */
  minute: epochSeconds,
  count: z.number().int().positive(),
});

/** Admin API scopes (docs/audit.md). Events hold strings, so a scope added later never breaks an older reader. */
export const adminScopes = ['audit:read', 'tokens:revoke', 'ssf:receivers', 'accounts:read', 'accounts:write'] as const;
export type AdminScope = (typeof adminScopes)[number];

/** An admin token for /admin/v1/*: stored only as a keyed hash, like every other secret. */
export const AdminTokenIssued = z.object({
  type: z.literal('AdminTokenIssued'),
  v: z.literal(1),
  adminTokenId: id,
  name: z.string().min(1).max(200),
  scopes: z.array(z.string().min(1).max(64)),
  tokenHash: keyedHash,
  hashingKey,
  at: epochSeconds,
  /** From this instant on the token is refused. Absent: it never expires (every token issued before expiries existed). */
  expiresAt: epochSeconds.optional(),
});

export const AdminTokenRevoked = z.object({
  type: z.literal('AdminTokenRevoked'),
  v: z.literal(1),
  adminTokenId: id,
  at: epochSeconds,
});

/**
 * The secret-hashing key the log is written with, recorded by the first writer that appends to a
 * log (a server also records it on a log written before this event existed): only its keyed
 * fingerprint, never the key. Every writer compares its own key with it before its first append.
 */
export const SecretHashingKeyRecorded = z.object({
  type: z.literal('SecretHashingKeyRecorded'),
  v: z.literal(1),
  fingerprint: keyFingerprint,
  at: epochSeconds,
});

/**
 * `tessera keys rotate-hashing`: new hashes are made with the key `fingerprint` from now on. The
 * previous key is retired, and kept to check the hashes it made for as long as they can be presented.
 */
export const SecretHashingKeyRotated = z.object({
  type: z.literal('SecretHashingKeyRotated'),
  v: z.literal(1),
  fingerprint: keyFingerprint,
  previousFingerprint: keyFingerprint,
  at: epochSeconds,
});

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'SHA-256, hex');

/**
 * The archive's trust anchors, in a stream that is never archived (docs/audit.md, "The trust
 * model"): an archive signing key Tessera made in its data folder (`made`), or one that had signed
 * an archive written before anchors were recorded and was taken on first use (`adopted`). Only
 * entries signed by a key recorded here count; a public key dropped into the archive's `keys/` does not.
 */
export const ArchiveKeyTrusted = z.object({
  type: z.literal('ArchiveKeyTrusted'),
  v: z.literal(1),
  /** SHA-256 (hex) of the public key's DER (SubjectPublicKeyInfo), as the archive names its key files. */
  fingerprint: sha256Hex,
  source: z.enum(['made', 'adopted']),
  at: epochSeconds,
});

/**
 * The archive manifest's head after an archiving run added to it: the manifest must still reach
 * this entry, unchanged, for the archive to be trusted, so a cut tail, a replaced `manifest/` or a
 * rollback to an older copy is seen.
 */
export const ArchiveHeadRecorded = z.object({
  type: z.literal('ArchiveHeadRecorded'),
  v: z.literal(1),
  sequence: z.number().int().positive(),
  /** SHA-256 (hex) of that entry's file. */
  sha256: sha256Hex,
  at: epochSeconds,
});

/**
 * A revocation another region made, as this region's Shared Signals transmitter received it from
 * the mirrored topic (docs/shared-signals.md, "Several regions"): recorded so that this region's
 * receivers get it like a local one, from the log, with the same durable delivery. Never published
 * by the relay (the other region already did), and read by nothing but the transmitter and the
 * audit trail: the revocation itself reached this region's read models from the topic.
 */
export const RevocationMirrored = z.object({
  type: z.literal('RevocationMirrored'),
  v: z.literal(1),
  /** The region whose log recorded the revocation. */
  region: z.string().regex(/^[a-z0-9]{1,16}$/),
  /** Its event id there: a redelivery is recorded once. */
  sourceEventId: id,
  /** Epoch milliseconds when that region's log recorded it. */
  sourceRecordedAt: z.number().int().nonnegative(),
  revocation: z.discriminatedUnion('type', [TokenRevoked, AccountTokensRevoked, CredentialTokensRevoked]),
});

export type LegacyTokenIssued = z.infer<typeof LegacyTokenIssued>;
export type AuthenticationFailuresCounted = z.infer<typeof AuthenticationFailuresCounted>;
export type AdminTokenIssued = z.infer<typeof AdminTokenIssued>;
export type AdminTokenRevoked = z.infer<typeof AdminTokenRevoked>;
export type SecretHashingKeyRecorded = z.infer<typeof SecretHashingKeyRecorded>;
export type SecretHashingKeyRotated = z.infer<typeof SecretHashingKeyRotated>;
export type ArchiveKeyTrusted = z.infer<typeof ArchiveKeyTrusted>;
export type ArchiveHeadRecorded = z.infer<typeof ArchiveHeadRecorded>;
export type RevocationMirrored = z.infer<typeof RevocationMirrored>;

export type AdminTokenEvent = AdminTokenIssued | AdminTokenRevoked;
export type SecretHashingKeyEvent = SecretHashingKeyRecorded | SecretHashingKeyRotated;
export type ArchiveTrustEvent = ArchiveKeyTrusted | ArchiveHeadRecorded;
export const adminTokenEventTypes = ['AdminTokenIssued', 'AdminTokenRevoked'] as const satisfies readonly AdminTokenEvent['type'][];
export const secretHashingKeyEventTypes = ['SecretHashingKeyRecorded', 'SecretHashingKeyRotated'] as const satisfies readonly SecretHashingKeyEvent['type'][];
export const archiveTrustEventTypes = ['ArchiveKeyTrusted', 'ArchiveHeadRecorded'] as const satisfies readonly ArchiveTrustEvent['type'][];
