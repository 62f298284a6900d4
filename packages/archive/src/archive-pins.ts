import { readFileSync } from 'node:fs';
import { CodedError } from '@tessera/contracts/errors';

/**
 * What the archive is checked against: the archive keys whose signatures count, and the manifest's
 * head as last recorded. Without them a verification can only say the archive agrees with itself:
 * anyone who can write the archive folder can drop a key into `keys/` and re-sign, or cut entries
 * off the end of the chain, and the chain still checks. Tessera records its pins in the event log
 * (ArchiveKeyTrusted, ArchiveHeadRecorded); an auditor keeps them out of band, as the answer of
 * `GET /admin/v1/archive/keys`, and hands that file to `tessera archive verify --pin`.
 */
export interface ArchivePins {
  /** Fingerprints (SHA-256 of the public key's DER, hex) of the keys whose entries are trusted. */
  readonly keys: ReadonlySet<string>;
  /** The newest manifest entry as recorded: its sequence and the SHA-256 of its file. */
  readonly head: ArchiveHead | undefined;
  /** Where the pins come from, for messages: "the event log", "pin file pins.json". */
  readonly source: string;
}

export interface ArchiveHead {
  readonly sequence: number;
  readonly sha256: string;
}

const fingerprintPattern = /^[0-9a-f]{64}$/;

/** An anchor event as the log records it (ArchiveKeyTrusted, ArchiveHeadRecorded), read by its fields: this package knows no log types. */
export type ArchiveAnchor = { readonly type: 'ArchiveKeyTrusted'; readonly fingerprint: string } | { readonly type: 'ArchiveHeadRecorded'; readonly sequence: number; readonly sha256: string };

/** The pins the log's anchors make: every key recorded, and the newest head. */
export function pinsFromAnchors(anchors: Iterable<ArchiveAnchor | { readonly type: string }>, source: string): ArchivePins {
  const keys = new Set<string>();
  let head: ArchiveHead | undefined;
  for (const anchor of anchors) {
    if (!isAnchor(anchor)) continue;
    if (anchor.type === 'ArchiveKeyTrusted') keys.add(anchor.fingerprint);
    else if (head === undefined || anchor.sequence >= head.sequence) head = { sequence: anchor.sequence, sha256: anchor.sha256 };
  }
  return { keys, head, source };
}

const isAnchor = (event: ArchiveAnchor | { readonly type: string }): event is ArchiveAnchor => event.type === 'ArchiveKeyTrusted' || event.type === 'ArchiveHeadRecorded';

/** A pin file is not what `--pin` takes: named, so the CLI answers with a usage error. */
export class InvalidPinFile extends CodedError {
  readonly code = 'ERR_INVALID_PIN_FILE';
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`${file} is not a pin file: ${reason} (save the answer of GET /admin/v1/archive/keys, or write {"keys":[{"fingerprint":"…"}],"manifest_entries":N,"manifest_head_sha256":"…"})`);
    this.name = 'InvalidPinFile';
  }
}

/**
 * Reads pins kept as the admin API's answer (`GET /admin/v1/archive/keys`, saved as it came):
 * `keys[].fingerprint`, and the head as `manifest_entries` (its sequence: entries are numbered from 1
 * without a gap) with `manifest_head_sha256`. A file that names no head pins the keys only.
 */
export function readPinFile(file: string): ArchivePins {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new InvalidPinFile(file, error instanceof Error ? error.message : String(error));
  }
  if (typeof parsed !== 'object' || parsed === null) throw new InvalidPinFile(file, 'not a JSON object');
  const { keys, manifest_entries: entries, manifest_head_sha256: headSha256 } = parsed as Record<string, unknown>;
  if (!Array.isArray(keys) || keys.length === 0) throw new InvalidPinFile(file, 'no keys');
  const fingerprints = new Set<string>();
  for (const key of keys) {
    const fingerprint = typeof key === 'object' && key !== null ? (key as Record<string, unknown>).fingerprint : undefined;
    if (typeof fingerprint !== 'string' || !fingerprintPattern.test(fingerprint)) throw new InvalidPinFile(file, 'a key without a 64-hex-digit fingerprint');
    fingerprints.add(fingerprint);
  }
  if (headSha256 === null || headSha256 === undefined) return { keys: fingerprints, head: undefined, source: `pin file ${file}` };
  if (typeof headSha256 !== 'string' || !fingerprintPattern.test(headSha256)) throw new InvalidPinFile(file, 'manifest_head_sha256 is not a SHA-256 in hex');
  if (typeof entries !== 'number' || !Number.isInteger(entries) || entries < 1) throw new InvalidPinFile(file, 'manifest_entries is not the head entry\'s sequence');
  return { keys: fingerprints, head: { sequence: entries, sha256: headSha256 }, source: `pin file ${file}` };
}
