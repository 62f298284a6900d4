export { startRevocationConsumer, type RevocationConsumer, type RevocationConsumerOptions, type RevocationConsumerStats } from './revocation-consumer.js';
export { createPositionDeduper } from './position-deduper.js';
// A downstream service needs a feed to consume: Kafka's comes with the consumer, not from a second import.
export { createKafkaFeed, type KafkaFeedOptions } from '@tessera/feed';
