export * from './verifier-state.js';
export { forwardAuthRoute } from './forward-auth-route.js';
export { exampleRoutes } from './example-routes.js';
