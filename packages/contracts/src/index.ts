export * from './events.js';
export * from './http.js';
export * from './claims.js';
export * from './trace-context.js';
