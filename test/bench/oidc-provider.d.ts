/**
 * oidc-provider 9 ships no type declarations; this is the little the bench uses. Its
 * configuration object is large and loosely shaped, so it is typed as plain data here.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface ProviderConfiguration {
    readonly [setting: string]: unknown;
  }

  export class Provider {
    constructor(issuer: string, configuration?: ProviderConfiguration);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  export default Provider;
}
