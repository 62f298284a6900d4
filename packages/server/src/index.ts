export { buildApp, bodyLimitBytes, type AppParts } from './app.js';
export { buildAdminApp, type AdminRouteRegistrar } from './admin-app.js';
export { runHost, type Composition, type Host, type Listener, type Role, type RouteRegistrar, type RunningServer, type StartOptions } from './host.js';
export { followInto, nowSeconds, openGuardedStore, untilAvailable, type Follower } from './log-store.js';
export { createMetrics, registerGauges, type Metrics } from './metrics.js';
export { loadTlsMaterial } from './tls.js';
export { redactedPaths } from './logger.js';
export { StartFailure } from './listen.js';
export { createReadiness, type Readiness } from './readiness.js';
