export { mirroredTopicsOf, wireMirroredRegions, type MirrorTargets, type MirroredTopic } from './mirrored-regions.js';
