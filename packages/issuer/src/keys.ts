// What administration needs of the issuer's signing keys, without its HTTP side: the CLI imports this.
export { SigningKeyring, createSigningKey, newSigningKeyPair } from './signing-keyring.js';
export { SigningKeyUnavailable } from './issuer-errors.js';
