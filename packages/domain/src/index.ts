export * from './errors.js';
export * from './decider.js';
export * from './constant-time.js';
export * from './family.js';
export * from './account.js';
export * from './credential-directory.js';
export * from './signing-keys.js';
