export * from './issuer-errors.js';
export * from './signing-keyring.js';
export * from './token-service.js';
export { v5TokenRoutes } from './routes-v5.js';
export { v1AuthenticateRoutes } from './routes-v1.js';
export { createIssuerParts, nowSeconds, type IssuerParts } from './issuer-parts.js';
export { issuerRoutes, wireIssuer } from './issuer-composition.js';
