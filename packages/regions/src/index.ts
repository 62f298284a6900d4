export { regionSettings, type PeerLinkSettings, type RegionSettings } from './region-settings.js';
export { createIssuerRegionParts, issuerMirrorTargets, wireIssuerRegion, type IssuerRegionParts } from './issuer-region.js';
export { createForwarding, type ForwardingOptions } from './forward-to-home.js';
export { decideHome, familyHomedIn, type HomeDecision, type RegionMap } from './home-region.js';
export { PeerHealth, type PeerHealthOptions } from './peer-health.js';
export { createRemoteRevocation, type RemoteRevocation, type RemoteRevocationDeps, type RemoteRevocationOutcome } from './remote-revocation.js';
export { RevokedElsewhere, recordRevokedElsewhere, type RevokedElsewhereOptions } from './revoked-elsewhere.js';
export { MirroredRevocations, type MirroredRevocationSource, type MirroredRevocationsOptions } from './mirrored-revocations.js';
export { wireMirroredRevocations } from './wire-mirrored-revocations.js';
