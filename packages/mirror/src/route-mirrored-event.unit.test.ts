import { describe, expect, it } from 'vitest';
import type { AccountTokensRevoked, ControlRegionChanged, PermissionsChanged, PublishedEvent, SigningKeyPublished, TokenIssued, TokenRevoked, TokenRotated } from '@tessera/contracts';
import type { FeedEvent } from '@tessera/feed';
import type { MirroredTopic } from './mirrored-topics.js';
import { routeMirroredEvent, type MirrorTargets } from './route-mirrored-event.js';

/** One event of region us1 as it arrives here, on each of its mirrored topics. */
const T = 1_900_000_000;
const revocationTopic: MirroredTopic = { region: 'us1', topic: 'us1.tessera.revocations', carries: 'revocations' };
const accountTopic: MirroredTopic = { region: 'us1', topic: 'us1.tessera.accounts', carries: 'accounts' };
const familyTopic: MirroredTopic = { region: 'us1', topic: 'us1.tessera.families', carries: 'families' };

const generation = {
  familyId: 'us1_family',
  accountId: 'acct',
  credentialId: 'cred',
  apiLoginId: 'tsl_shop',
  refreshTokenHash: 'H'.repeat(43),
  jti: 'jti',
  scope: [],
  issuedAt: T,
  accessExpiresAt: T + 3600,
  refreshExpiresAt: T + 86_400,
};
const issued: TokenIssued = { type: 'TokenIssued', v: 1, ...generation, generation: 0 };
const rotated: TokenRotated = { type: 'TokenRotated', v: 1, ...generation, generation: 1, rejectsUntil: T + 3600 };
const revoked: TokenRevoked = { type: 'TokenRevoked', v: 1, familyId: 'us1_family', accountId: 'acct', generation: 1, revokedAt: T + 10, accessExpiresAt: T + 3600 };
const cut: AccountTokensRevoked = { type: 'AccountTokensRevoked', v: 1, accountId: 'acct', notBefore: T, rejectsUntil: T + 3600, reason: 'compromised', at: T };
const permissions: PermissionsChanged = { type: 'PermissionsChanged', v: 1, accountId: 'acct', permissions: [], at: T };
const key: SigningKeyPublished = { type: 'SigningKeyPublished', v: 1, kid: 'us1-key', alg: 'ES256', publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }, at: T };
const promoted: ControlRegionChanged = { type: 'ControlRegionChanged', v: 1, region: 'us1', epoch: 2, recordedIn: 'us1', at: T };

const delivered = (event: PublishedEvent, stream = `tokenfamily-${generation.familyId}`): FeedEvent => ({ eventId: 'e-1', position: 7n, stream, revision: 0n, recordedAt: T * 1000, event });

/** Every read model a process can have, each writing down what it was handed, in order. */
function everyModel(): { readonly targets: Required<MirrorTargets>; readonly handed: string[] } {
  const handed: string[] = [];
  return {
    handed,
    targets: {
      keys: { apply: (event) => void handed.push(`keys ${event.type}`) },
      accounts: { apply: (event) => void handed.push(`accounts ${event.type}`) },
      projection: { apply: (event) => void handed.push(`projection ${event.type}`) },
      families: { apply: (event) => void handed.push(`families ${event.type}`) },
      remoteRevocations: { apply: (event, recordedIn) => void handed.push(`remoteRevocations ${event.type} recorded in ${recordedIn}`) },
      signals: { receive: (event, source) => void handed.push(`signals ${event.type} from ${source.region} ${source.eventId} ${source.recordedAt}`) },
      control: { apply: (event) => void handed.push(`control ${event.type}`), caughtUp: () => undefined },
    },
  };
}

function route(event: FeedEvent, topic: MirroredTopic): { readonly applied: boolean; readonly handed: readonly string[] } {
  const { targets, handed } = everyModel();
  return { applied: routeMirroredEvent(event, topic, targets), handed };
}

describe('each mirrored topic feeds the read models it is the source of', () => {
  it('the revocation topic: rotations, revocations and cuts to the projection; revocations and cuts, with where they were recorded, to Shared Signals', () => {
    expect(route(delivered(rotated), revocationTopic)).toEqual({ applied: true, handed: ['projection TokenRotated'] });
    expect(route(delivered(revoked), revocationTopic)).toEqual({ applied: true, handed: ['projection TokenRevoked', `signals TokenRevoked from us1 e-1 ${T * 1000}`] });
    expect(route(delivered(cut, 'account-acct'), revocationTopic)).toEqual({ applied: true, handed: ['projection AccountTokensRevoked', `signals AccountTokensRevoked from us1 e-1 ${T * 1000}`] });
  });

  it('a revocation another region recorded in a revocations-<familyId> stream reaches the refresh decisions first, then the verifier', () => {
    expect(route(delivered(revoked, 'revocations-us1_family'), revocationTopic).handed).toEqual([
      'remoteRevocations TokenRevoked recorded in us1',
      'projection TokenRevoked',
      `signals TokenRevoked from us1 e-1 ${T * 1000}`,
    ]);
  });

  it('the revocation topic\'s signing keys go to the key set alone', () => {
    expect(route(delivered(key, 'signingkeys'), revocationTopic)).toEqual({ applied: true, handed: ['keys SigningKeyPublished'] });
  });

  it('the account topic: account events to the accounts, control-region changes to the fence', () => {
    expect(route(delivered(permissions, 'account-acct'), accountTopic)).toEqual({ applied: true, handed: ['accounts PermissionsChanged'] });
    expect(route(delivered(promoted, 'controlregion'), accountTopic)).toEqual({ applied: true, handed: ['control ControlRegionChanged'] });
  });

  it('a cut travels on both topics and reaches each model once: the projection from the revocation topic, the accounts from the account topic', () => {
    expect(route(delivered(cut, 'account-acct'), accountTopic).handed).toEqual(['accounts AccountTokensRevoked']);
    expect(route(delivered(cut, 'account-acct'), revocationTopic).handed).not.toContain('accounts AccountTokensRevoked');
  });

  it('the family topic: family events to the check material alone', () => {
    for (const event of [issued, rotated, revoked]) expect(route(delivered(event), familyTopic)).toEqual({ applied: true, handed: [`families ${event.type}`] });
    expect(route(delivered(permissions, 'account-acct'), familyTopic)).toEqual({ applied: false, handed: [] });
  });
});

describe('an event no read model of this process uses', () => {
  it('is not counted as applied, on any topic', () => {
    const none: MirrorTargets = {};
    expect(routeMirroredEvent(delivered(revoked), revocationTopic, none)).toBe(false);
    expect(routeMirroredEvent(delivered(key, 'signingkeys'), revocationTopic, none)).toBe(false);
    expect(routeMirroredEvent(delivered(permissions, 'account-acct'), accountTopic, none)).toBe(false);
    expect(routeMirroredEvent(delivered(promoted, 'controlregion'), accountTopic, none)).toBe(false);
    expect(routeMirroredEvent(delivered(issued), familyTopic, none)).toBe(false);
  });

  it('is left alone: the revocation topic carries no account events for the accounts, the account topic no revocations for the projection', () => {
    expect(route(delivered(permissions, 'account-acct'), revocationTopic)).toEqual({ applied: false, handed: [] });
    expect(route(delivered(revoked), accountTopic)).toEqual({ applied: false, handed: [] });
  });

  it('counts as applied when one model of several takes it: a verifier with no Shared Signals still applies a revocation', () => {
    const handed: string[] = [];
    expect(routeMirroredEvent(delivered(revoked), revocationTopic, { projection: { apply: (event) => void handed.push(event.type) } })).toBe(true);
    expect(handed).toEqual(['TokenRevoked']);
  });
});
