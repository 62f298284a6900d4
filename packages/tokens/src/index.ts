export * from './secret-hasher.js';
export * from './identifiers.js';
export * from './refresh-token.js';
export * from './signing-key.js';
export * from './key-set.js';
export * from './access-token.js';
export * from './key-folder.js';
export * from './verified-token-cache.js';
