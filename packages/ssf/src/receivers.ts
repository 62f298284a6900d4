// What administration needs of the transmitter's receivers, without its HTTP side: the CLI imports this.
export { createReceiverService, listReceivers, newReceiverToken, type CreatedReceiver, type ReceiverService, type ReceiverSummary } from './receiver-service.js';
export { InvalidSsfReceiverInput, SsfReceiverNotFound } from './ssf-errors.js';
