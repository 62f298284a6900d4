import { describe, expect, it } from 'vitest';
import { loadConfig } from '@tessera/config';
import { regionSettings } from './region-settings.js';

const secret = 's'.repeat(32);

describe('the region settings', () => {
  it('are none for a process of one region', () => {
    expect(regionSettings(loadConfig({}))).toBeUndefined();
  });

  it('name the region, its peers, the peer link, the control region and the mirrored regions', () => {
    const settings = regionSettings(
      loadConfig({
        TESSERA_REGION: 'eu1',
        TESSERA_BARE_FAMILY_REGION: 'us1',
        TESSERA_PEER_REGIONS: 'us1=https://us1.example:8443',
        TESSERA_PEER_SECRET: secret,
        TESSERA_PEER_TIMEOUT: '7',
        TESSERA_CONTROL_REGION: 'us1',
        TESSERA_KAFKA_BROKERS: 'k:9092',
        TESSERA_MIRRORED_REGIONS: 'us1',
      }),
    );
    expect(settings).toMatchObject({
      own: 'eu1',
      bareFamilies: 'us1',
      peers: { us1: 'https://us1.example:8443' },
      peerLink: { secret, timeoutSeconds: 7 },
      control: 'us1',
      mirrored: ['us1'],
    });
  });

  it('without a peer secret have no peer link', () => {
    expect(regionSettings(loadConfig({ TESSERA_REGION: 'eu1' }))).toMatchObject({ own: 'eu1', peers: {}, peerLink: undefined, control: undefined });
  });

  it('keep the peer secret of an issuer without a region: it still accepts forwarded requests', () => {
    expect(regionSettings(loadConfig({ TESSERA_PEER_SECRET: secret }))).toMatchObject({ own: undefined, peerLink: { secret } });
  });
});
