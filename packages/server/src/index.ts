export { buildApp, bodyLimitBytes, type AppParts } from './app.js';
export { startServer, type RunningServer, type Role, type StartOptions } from './start.js';
export { openEventStore } from './event-store-factory.js';
export { loadTlsMaterial } from './tls.js';
export { redactedPaths } from './logger.js';
export { StartFailure } from './listen.js';
export { createReadiness, type Readiness } from './readiness.js';
