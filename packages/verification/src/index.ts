export * from './revocation-projection.js';
export * from './bearer-verifier.js';
export { bearerCheck, tesseraAuth, type TesseraAuthOptions } from './fastify-plugin.js';
export { sendAccessRefusal } from './access-refusal.js';
export { createKeyRefresh } from './key-refresh.js';
export { JwksUnavailable, loadJwks } from './jwks.js';
// A downstream verifier builds its key set itself: the class comes with the plugin, not from a second package.
export { PublicKeySet } from '@tessera/tokens';
export { createSsfReceiver, type SsfDelivery, type SsfReceiver, type SsfReceiverOptions } from './ssf-receiver.js';
export { ssfPushHandler, ssfPushMiddleware, type NextFunction } from './ssf-push-handlers.js';
export { ssfPushRoute, type SsfPushRouteOptions } from './ssf-push-route.js';
export type { PushAnswer } from './ssf-push-answer.js';
export type { SetErrorCode } from './ssf-set-verification.js';
export { defaultEventsRequested, meaningOfSet, ssfEventTypes, MalformedSet, SetRefused, type SetMappingOptions, type SetMeaning } from './ssf-set-mapping.js';
export { TransmitterRefused } from './ssf-transmitter.js';
