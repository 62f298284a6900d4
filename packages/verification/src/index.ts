export * from './revocation-projection.js';
export * from './bearer-verifier.js';
export { bearerCheck, tesseraAuth, type TesseraAuthOptions } from './fastify-plugin.js';
export { sendAccessRefusal } from './access-refusal.js';
export { createKeyRefresh } from './key-refresh.js';
export { JwksUnavailable, loadJwks } from './jwks.js';
// A downstream verifier builds its key set itself: the class comes with the plugin, not from a second package.
export { PublicKeySet } from '@tessera/tokens';
