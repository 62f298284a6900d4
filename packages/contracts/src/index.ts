export * from './events.js';
export * from './http.js';
export * from './claims.js';
