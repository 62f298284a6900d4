export * from './problem.js';
export * from './error-handler.js';
export * from './bearer-challenge.js';
export * from './client-error.js';
export * from './framework-error.js';
export * from './json-body.js';
export * from './problem-responses.js';
export * from './problem-table.js';
