export { createHost, type Host, type HostOptions, type HostProcess } from './host.js';
export type { Role } from '@tessera/config';
export { followInto, openGuardedStore, untilAvailable, type Follower } from './log-store.js';
export { createMetrics, instrumentEventStore, registerCounter, registerGauges, registerLabeledCounter, registerLabeledGauge, type Metrics } from './metrics.js';
export { createReadiness, type Readiness } from './readiness.js';
export { loggerOptions, redactedPaths } from './logger.js';
export { ownerOnlyDataFolder } from './data-folder.js';
export { StartFailure } from './start-failure.js';
export { ManualClock, Retry, epochSeconds, systemClock, type Clock } from '@tessera/timing';
