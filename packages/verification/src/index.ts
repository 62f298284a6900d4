export * from './revocation-projection.js';
export * from './bearer-verifier.js';
export { tesseraAuth, type TesseraAuthOptions } from './fastify-plugin.js';
export { createKeyRefresh } from './key-refresh.js';
