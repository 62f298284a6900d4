import { randomBytes, randomUUID } from 'node:crypto';

/**
 * Secrets carry a recognisable prefix so secret scanners (and people) can spot a leaked one.
 * Entropy: 32 random bytes for every secret, 16 for identifiers.
 */
const token = (bytes: number) => randomBytes(bytes).toString('base64url');

export const newAccountId = () => randomUUID();
export const newCredentialId = () => randomUUID();
export const newFamilyId = () => token(16);
export const newJti = () => token(16);
export const newApiLoginId = () => `tsl_${token(9)}`;
export const newTransactionKey = () => `tsk_${token(32)}`;
export const newLegacyApiId = () => `tla_${token(9)}`;
export const newLegacyApiKey = () => `tlk_${token(32)}`;
