export { createRelay, type Relay, type RelayLag, type RelayOptions } from './relay.js';
export {
  RelayCheckpointCorrupt,
  createFileCheckpoint,
  createMemoryCheckpoint,
  defaultCheckpointFile,
  type RelayCheckpoint,
} from './relay-checkpoint.js';
export { wireRelay } from './wire-relay.js';
