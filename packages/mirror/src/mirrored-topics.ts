import { mirroredRegionsOf, type TesseraConfig } from '@tessera/config';

export interface MirroredTopic {
  readonly region: string;
  /** `<region>.<topic>`: MirrorMaker 2's default replication policy, with the region as the cluster alias. */
  readonly topic: string;
  /** What the topic carries: the revocation feed (keys, rotations, revocations, cuts), account events, or family events. */
  readonly carries: 'revocations' | 'accounts' | 'families';
}

/**
 * The mirrored topics this process follows, from TESSERA_MIRRORED_REGIONS (default: the peer
 * regions); the family topics only with `families` (a process that revokes).
 */
export function mirroredTopicsOf(config: TesseraConfig, options: { readonly families?: boolean } = {}): MirroredTopic[] {
  return mirroredRegionsOf(config).flatMap((region) => [
    { region, topic: `${region}.${config.TESSERA_KAFKA_TOPIC}`, carries: 'revocations' as const },
    { region, topic: `${region}.${config.TESSERA_KAFKA_ACCOUNT_TOPIC}`, carries: 'accounts' as const },
    ...(options.families ? [{ region, topic: `${region}.${config.TESSERA_KAFKA_FAMILY_TOPIC}`, carries: 'families' as const }] : []),
  ]);
}
