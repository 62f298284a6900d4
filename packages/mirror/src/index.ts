export { mirroredTopicsOf, wireMirroredRegions, type MirrorTargets, type MirroredTopic } from './mirrored-regions.js';
export { controlRegionFenceOf, localLogSource, readControlRegion, type ControlRegionLog } from './control-region.js';
