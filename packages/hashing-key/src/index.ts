export { checkLogHashingKey, type CheckedHashingKey, type LogHashingKeyCheck } from './check-log-hashing-key.js';
export { LogHashingKeyRefusal, type LogHashingKeyRefusalCode } from './log-hashing-key-refusal.js';
export { SecretHashingKeyring } from './secret-hashing-keyring.js';
export { rotateHashingKey, type HashingKeyRotation } from './rotate-hashing-key.js';
export { retiredKeyUse, type RetiredKeyUse } from './retired-key-use.js';
export { SecretsByHash } from './secrets-by-hash.js';
