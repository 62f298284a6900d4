export * from './events.js';
export * from './http.js';
export * from './claims.js';
export * from './error-code.js';
export * from './one-of.js';
export * from './trace-context.js';
export * from './time-ordered-id.js';
export * from './oauth.js';
