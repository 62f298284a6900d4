import type { FastifyInstance } from 'fastify';
import { buildApp, type AppParts } from './app.js';
import { serveMetrics } from './http-metrics.js';

/** A route registrar for the admin listener: it gets the app alone, as that listener serves no interface version. */
export type AdminRouteRegistrar = (app: FastifyInstance) => Promise<void>;

/**
 * The admin listener's app (TESSERA_ADMIN_HOST:TESSERA_ADMIN_PORT), private as Hydra's admin port
 * and Keycloak's management interface are: /metrics, /healthz, /readyz and the services' admin
 * routes. Built as the public app is, so it has the same TLS policy, timeouts, caps, logging and
 * problem+json errors, but none of the public routes.
 */
export function buildAdminApp(parts: Omit<AppParts, 'routes' | 'listener'> & { readonly adminRoutes: readonly AdminRouteRegistrar[] }): Promise<FastifyInstance> {
  const { adminRoutes, ...shared } = parts;
  return buildApp({
    ...shared,
    listener: { v5: false, v1: false },
    routes: [
      async (app) => {
        serveMetrics(app, parts.metrics);
        for (const register of adminRoutes) await register(app);
      },
    ],
  });
}
