export * from './problem.js';
export * from './error-handler.js';
