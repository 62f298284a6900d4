export { idAsUuid, idFromUuid, type ArchivedAccess, type ArchivedEvent, type IdForm } from './archived-event.js';
export { archiveKeyFile, archivePublicKeys, fingerprintOf, loadOrCreateArchiveKey, publicKeyFile, type ArchiveKey } from './archive-key.js';
export { ArchiveReadInterrupted, ArchiveReader, type ArchiveEventQuery } from './archive-reader.js';
export {
  appendEntry,
  liveSegments,
  manifestDir,
  readManifest,
  removeLeftovers,
  segmentEntryBody,
  segmentFileName,
  segmentsDir,
  sha256,
  type DeletionEntry,
  type ManifestEntry,
  type SegmentEntry,
  type StoredEntry,
} from './manifest.js';
export { closedAt, mattersUntil, removableEvents, retentionOf, rollingStreamPrefixes, closingStreamPrefixes, snapshottedStreamPrefixes, keptStreamPrefixes, type RetainedEvent, type RetentionSettings, type StreamRetention } from './retention-rule.js';
export { readSegment, SegmentUnverified, sha256File, temporarySuffix, writeSegment, type SegmentFacts } from './segment-file.js';
export { verifyArchive, type ArchiveBreak, type ArchiveVerification, type VerifyOptions } from './verify-archive.js';
export { archivedThrough } from './archived-through.js';
export { InvalidPinFile, pinsFromAnchors, readPinFile, type ArchiveAnchor, type ArchiveHead, type ArchivePins } from './archive-pins.js';
export { SegmentHashes } from './segment-hashes.js';
export { ArchiveUntrusted, TrustedArchive } from './trusted-archive.js';
