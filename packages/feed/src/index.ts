export * from './revocation-feed.js';
export { decodeFeedMessage, encodeFeedMessage, FeedMessageValue, type DecodedFeedMessage, type EncodedFeedMessage } from './feed-message.js';
export { InProcessRevocationFeed, createInProcessFeed } from './in-process-feed.js';
export {
  KafkaRevocationFeed,
  createKafkaFeed,
  defaultRevocationTopic,
  privateGroupId,
  translateKafkaError,
  type EnsureTopicOptions,
  type KafkaFeedOptions,
  type TranslateOptions,
} from './kafka-feed.js';
export {
  isAccessRefused,
  type KafkaOAuthBearerLogin,
  type KafkaPasswordLogin,
  type KafkaSaslOptions,
  type KafkaSecurityOptions,
  type KafkaTlsOptions,
} from './kafka-security.js';
