export * from './verifier-state.js';
export { forwardAuthRoute } from './forward-auth-route.js';
export { exampleRoutes } from './example-routes.js';
export { createVerifierParts, type VerifierParts } from './verifier-parts.js';
export { verifierRouteRegistrar, verifierRoutes, wireKafkaFedVerifier, wireLogFedVerifier } from './wire-verifier.js';
