export * from './config.js';
export { kafkaSecurityOf, type KafkaSecurity } from './kafka-security.js';
