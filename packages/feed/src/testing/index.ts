export { createRecorder, signingKeyPublished, tokenRevoked, tokenRotated } from './feed-events.js';
export { kafkaTestEnvironment, type KafkaTestEnvironment } from './kafka-test-environment.js';
export { warmUpKafka } from './warm-up.js';
