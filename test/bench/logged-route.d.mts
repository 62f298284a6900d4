import type { FastifyInstance } from 'fastify';

/** The charge-shaped POST route, and with a file one pino access line per request (logged-route.mjs). */
export function addChargeRoute(app: FastifyInstance, accessLogFile: string | undefined): void;
