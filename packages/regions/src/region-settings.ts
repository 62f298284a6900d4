import type { TesseraConfig } from '@tessera/config';

/** The link to other regions' issuers: present only with TESSERA_PEER_SECRET, which forwarded requests must carry. */
export interface PeerLinkSettings {
  /** TESSERA_PEER_SECRET. */
  readonly secret: string;
  /** Seconds a forwarded refresh waits for the home issuer's whole answer (TESSERA_PEER_TIMEOUT). */
  readonly timeoutSeconds: number;
  /** Seconds a forwarded revoke waits before it is decided here instead (TESSERA_PEER_REVOKE_TIMEOUT). */
  readonly revokeTimeoutSeconds: number;
  /** Consecutive failed exchanges that mark a peer region unreachable (TESSERA_PEER_FAILURES). */
  readonly failures: number;
  /** Between probes of each peer, and each probe's budget (TESSERA_PEER_PROBE_INTERVAL). */
  readonly probeIntervalSeconds: number;
}

/**
 * The region settings, as the rest of the code is given them: read from the config here and
 * nowhere else, so that multi-region is one module the compositions include or not.
 */
export interface RegionSettings {
  /**
   * TESSERA_REGION: new families are homed here, their ids prefixed with it. Undefined only for an
   * issuer without a region that still accepts forwarded requests (TESSERA_PEER_SECRET alone): the
   * home of the bare families other regions forward to it.
   */
  readonly own: string | undefined;
  /** Where bare (pre-region) family ids are homed (TESSERA_BARE_FAMILY_REGION); the own region when unset. */
  readonly bareFamilies: string | undefined;
  /** Peer region name → its issuer's origin (TESSERA_PEER_REGIONS); empty without peers. */
  readonly peers: Readonly<Record<string, string>>;
  /** The peer link, with TESSERA_PEER_SECRET. */
  readonly peerLink: PeerLinkSettings | undefined;
  /** The one region that may write accounts (TESSERA_CONTROL_REGION), the same in every region. */
  readonly control: string | undefined;
  /** TESSERA_MIRRORED_REGIONS as set (the regions whose mirrored topics are followed); undefined when unset. */
  readonly mirrored: readonly string[] | undefined;
}

/**
 * The region settings of `config`, or undefined for a process of one region (neither
 * TESSERA_REGION nor TESSERA_PEER_SECRET set): then no region part is wired at all. The config
 * already checked how the settings go together (a peer needs a region and the secret, a control
 * region needs a region, ...).
 */
export function regionSettings(config: TesseraConfig): RegionSettings | undefined {
  if (config.TESSERA_REGION === undefined && config.TESSERA_PEER_SECRET === undefined) return undefined;
  return {
    own: config.TESSERA_REGION,
    bareFamilies: config.TESSERA_BARE_FAMILY_REGION,
    peers: config.TESSERA_PEER_REGIONS ?? {},
    peerLink:
      config.TESSERA_PEER_SECRET === undefined
        ? undefined
        : {
            secret: config.TESSERA_PEER_SECRET,
            timeoutSeconds: config.TESSERA_PEER_TIMEOUT,
            revokeTimeoutSeconds: config.TESSERA_PEER_REVOKE_TIMEOUT,
            failures: config.TESSERA_PEER_FAILURES,
            probeIntervalSeconds: config.TESSERA_PEER_PROBE_INTERVAL,
          },
    control: config.TESSERA_CONTROL_REGION,
    mirrored: config.TESSERA_MIRRORED_REGIONS,
  };
}
