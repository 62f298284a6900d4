export * from './revocation-projection.js';
