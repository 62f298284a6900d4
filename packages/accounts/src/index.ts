export {
  createAccountService,
  isResourceIndicator,
  permissionPattern,
  listAccounts,
  accountSummaryOf,
  type AccountChange,
  type AccountService,
  type AccountServiceDeps,
  type AccountSummary,
  type CreatedAccount,
  type NewLegacyKey,
  type RevokeTokensOption,
} from './account-service.js';
export { maxClientKeys, maxClientKeysBytes, maxJwksUrlLength, validClientKeys } from './client-keys.js';
export { InvalidAccountInput } from './invalid-account-input.js';
export {
  accountChangeAnswer,
  accountRow,
  createdAccountAnswer,
  legacyKeyAnswer,
  rotatedKeyAnswer,
  type AccountChangeAnswer,
  type AccountRow,
  type AudiencesAnswer,
  type ClientKeysAnswer,
  type CreatedAccountAnswer,
  type DpopAnswer,
  type LegacyKeyAnswer,
  type RotatedKeyAnswer,
} from './account-answers.js';
