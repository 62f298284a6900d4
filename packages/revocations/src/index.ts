export { startRevocationConsumer, type RevocationConsumer, type RevocationConsumerOptions, type RevocationConsumerStats } from './revocation-consumer.js';
export { createPositionDeduper } from './position-deduper.js';
