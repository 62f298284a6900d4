export { wireSharedSignals, type SharedSignals, type SharedSignalsParts } from './ssf-composition.js';
export { createReceiverService, listReceivers, newReceiverToken, type CreatedReceiver, type ReceiverService, type ReceiverSummary } from './receiver-service.js';
export { ReceiverDirectory, type AuthenticatedReceiver } from './receiver-directory.js';
export { InvalidSsfReceiverInput, InvalidSsfRequest, SsfReceiverExists, SsfReceiverNotFound, SsfStreamExists, SsfStreamNotFound } from './ssf-errors.js';
export { ssfEventTypes, eventsSupported, deliveryMethods } from './event-types.js';
export { setFor, setJti, signalEventTypes, type SetClaims, type StreamView } from './set-mapping.js';
export { signSet, setType, type SetKeyring } from './set-signer.js';
export { transmitterMetadata, ssfPaths } from './stream-routes.js';
