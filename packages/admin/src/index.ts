export { createAdminGuard, adminPathPrefix, type AdminGuard, type AdminGuardDeps } from './admin-auth.js';
export { AccountFamilies, tokenLifetimeOf } from './account-families.js';
export { longestLiveTokenLifetime } from './token-lifetimes.js';
export { createOperatorRevocation, type AdminAudit, type OperatorRevocation, type OperatorRevocationDeps, type RevokedFamily } from './operator-revocation.js';
export { startFamiliesThread, type FamiliesReadModel, type FamiliesThread } from './families-thread.js';
export { revocationRoutes, type RevocationRoutesOptions } from './revocation-routes.js';
export { adminRoutes, wireAdminApi, type AdminApi, type AdminApiHooks } from './admin-composition.js';
export { auditRoutes, type AdminPreHandler, type AuditRoutesOptions } from './audit-routes.js';
