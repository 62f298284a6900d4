export { buildApp, bodyLimitBytes, type AppParts, type Listener, type RouteRegistrar } from './app.js';
export { buildAdminApp, type AdminRouteRegistrar } from './admin-app.js';
export { securityHeaders } from './security-headers.js';
export { tls12Ciphers, tls13Ciphers, tlsPolicy } from './tls-policy.js';
export { transportSettings, type TransportSettings } from './transport.js';
export { buildApps, runHost, type BuiltApps, type Compose, type Composition, type RunningServer, type StartOptions } from './serve.js';
export { countOutcomes, serveMetrics } from './http-metrics.js';
export { loadTlsMaterial, type TlsMaterial } from './tls.js';
