export { Archiver, ArchiveManifestMissing, archiverSteps, KeptStreamRemoval, type ArchiveRunResult, type ArchiverDeps, type ArchiverSettings, type ArchiverStep } from './archiver.js';
export { archiveTrustIn, logPinsSource, pinsOf, readArchivePins, type ArchiveTrust } from './archive-trust.js';
export type { HotIndex, HotIndexRow } from './hot-index.js';
export { relayCheckpointsPast } from './relay-hold.js';
