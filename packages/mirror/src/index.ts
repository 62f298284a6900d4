export { wireMirroredRegions } from './mirrored-regions.js';
export { mirroredTopicsOf, type MirroredTopic } from './mirrored-topics.js';
export type { MirrorTargets } from './route-mirrored-event.js';
export { controlRegionFenceOf, localLogSource, readControlRegion, type ControlRegionLog, type ControlRegionSettings } from './control-region.js';
