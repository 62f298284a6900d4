import { describe, expect, it } from 'vitest';
import { loadConfig } from '@tessera/config';
import { mirroredTopicsOf } from './mirrored-topics.js';

const peers = { TESSERA_REGION: 'eu1', TESSERA_PEER_REGIONS: 'us1=https://x:1,ap2=https://y:1', TESSERA_PEER_SECRET: 's'.repeat(32) };

describe('the mirrored topics a process follows', () => {
  it('each mirrored region\'s revocation and account topics, named <region>.<topic> as MirrorMaker 2 copies them', () => {
    expect(mirroredTopicsOf(loadConfig({ ...peers, TESSERA_KAFKA_BROKERS: 'k:9092' }))).toEqual([
      { region: 'us1', topic: 'us1.tessera.revocations', carries: 'revocations' },
      { region: 'us1', topic: 'us1.tessera.accounts', carries: 'accounts' },
      { region: 'ap2', topic: 'ap2.tessera.revocations', carries: 'revocations' },
      { region: 'ap2', topic: 'ap2.tessera.accounts', carries: 'accounts' },
    ]);
  });

  it('the family topics too, only for a process that revokes', () => {
    const config = loadConfig({ ...peers, TESSERA_KAFKA_BROKERS: 'k:9092', TESSERA_MIRRORED_REGIONS: 'us1' });
    expect(mirroredTopicsOf(config, { families: true }).map(({ topic, carries }) => [topic, carries])).toEqual([
      ['us1.tessera.revocations', 'revocations'],
      ['us1.tessera.accounts', 'accounts'],
      ['us1.tessera.families', 'families'],
    ]);
    expect(mirroredTopicsOf(config, { families: false }).map(({ carries }) => carries)).toEqual(['revocations', 'accounts']);
  });

  it('the topics under the names this region\'s topics are configured with', () => {
    const config = loadConfig({
      TESSERA_KAFKA_BROKERS: 'k:9092',
      TESSERA_MIRRORED_REGIONS: 'us1',
      TESSERA_KAFKA_TOPIC: 'revs',
      TESSERA_KAFKA_ACCOUNT_TOPIC: 'accts',
      TESSERA_KAFKA_FAMILY_TOPIC: 'fams',
    });
    expect(mirroredTopicsOf(config, { families: true }).map(({ topic }) => topic)).toEqual(['us1.revs', 'us1.accts', 'us1.fams']);
  });

  it('none without Kafka, and none with TESSERA_MIRRORED_REGIONS=none, whatever the peers', () => {
    expect(mirroredTopicsOf(loadConfig(peers), { families: true })).toEqual([]);
    expect(mirroredTopicsOf(loadConfig({ ...peers, TESSERA_KAFKA_BROKERS: 'k:9092', TESSERA_MIRRORED_REGIONS: 'none' }), { families: true })).toEqual([]);
  });
});
