import type { RegionMap } from './home-region.js';

/**
 * The region settings an issuer is given: the region module reads them from the config, and a
 * composition without it gives none (an issuer of one region, which forwards nothing and makes
 * bare family ids).
 */
export interface IssuerRegionSettings extends RegionMap {
  /** The link to peer issuers, with its shared secret; without it no request is taken as forwarded. */
  readonly peerLink?:
    | {
        readonly secret: string;
        readonly timeoutSeconds: number;
        readonly revokeTimeoutSeconds: number;
        readonly failures: number;
        readonly probeIntervalSeconds: number;
      }
    | undefined;
}
