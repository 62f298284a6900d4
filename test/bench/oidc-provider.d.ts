/**
 * oidc-provider 9 ships no type declarations; this is the little the bench uses. Its
 * configuration object is large and loosely shaped, so it is typed as plain data here.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface ProviderConfiguration {
    readonly [setting: string]: unknown;
  }

  export interface InteractionDetails {
    readonly uid: string;
    readonly params: Readonly<Record<string, unknown>>;
  }

  export class Grant {
    constructor(properties: { accountId: string; clientId: string });
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  export class Provider {
    constructor(issuer: string, configuration?: ProviderConfiguration);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
    interactionDetails(request: IncomingMessage, response: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(request: IncomingMessage, response: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
    readonly Grant: typeof Grant;
  }

  export default Provider;
}

/** oidc-provider's own in-memory adapter, given a store of the bench's size (oidc-provider-server.ts). */
declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  export default class MemoryAdapter {
    constructor(model: string, store: object);
  }
}

declare module 'oidc-provider/lib/helpers/lru.js' {
  export default class LRU {
    constructor(options: { maxSize: number });
  }
}
