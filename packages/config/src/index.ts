export * from './config.js';
export { kafkaSecurityOf, type KafkaSecurity } from './kafka-security.js';
export { publicUrlOf } from './ssf-variables.js';
