export {
  createAdminTokenService,
  isAdminScope,
  listAdminTokens,
  minOperatorTokenLength,
  validOperatorToken,
  type AdminTokenService,
  type AdminTokenServiceDeps,
  type AdminTokenSummary,
  type CreatedAdminToken,
  type RevokedAdminToken,
} from './admin-token-service.js';
export { AdminTokenDirectory, type AuthenticatedAdmin } from './admin-token-directory.js';
export { InvalidAdminTokenInput } from './invalid-admin-token-input.js';
