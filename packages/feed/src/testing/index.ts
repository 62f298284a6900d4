// Test support: src/testing is left out of the build and exported only to tests (the tessera-source condition), so no compiled module imports vitest.
export { createRecorder, signingKeyPublished, tokenRevoked, tokenRotated } from '../sample-events.js';
export { kafkaTestEnvironment, type KafkaTestEnvironment } from './kafka-test-environment.js';
export { warmUpKafka } from './warm-up.js';
export {
  adminConnection,
  grantAcls,
  mintOAuthToken,
  securedKafkaEnvironment,
  type AclGrant,
  type AclOperation,
  type SecuredKafka,
  type SecuredKafkaOAuth,
  type SecuredKafkaUser,
} from './secured-kafka-environment.js';
