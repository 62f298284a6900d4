/** The log's stream names, one per aggregate; the relay publishes an event with its stream's name. */
export const streams = {
  account: (accountId: string) => `account-${accountId}`,
  family: (familyId: string) => `tokenfamily-${familyId}`,
  /**
   * A revocation of a family homed in another region, recorded where it arrived while the home
   * region was out of reach (docs/decisions/0018). Archived like family streams: keep the prefix.
   */
  revocations: (familyId: string) => `revocations-${familyId}`,
  /** Revocations another region made, received for this region's Shared Signals receivers; rolling, archived by age. */
  mirroredRevocations: (region: string) => `mirroredrevocations-${region}`,
  /** This region's record of the control region's changes (`tessera regions promote-control`). */
  controlRegion: () => 'controlregion',
  legacyTokens: (accountId: string) => `legacytokens-${accountId}`,
  signingKeys: () => 'signingkeys',
  /** Failed-authentication counts of one account, or of attempts that named no known credential. */
  authenticationFailures: (accountId: string | undefined) => `authfailures-${accountId ?? 'unknown'}`,
  adminToken: (adminTokenId: string) => `admintoken-${adminTokenId}`,
  /** The log's one record of its secret-hashing key: fingerprints and rotations. */
  secretHashingKey: () => 'secrethashingkey',
  /** The archive's trust anchors: the keys Tessera made and the manifest's head after each run. Never archived. */
  archiveTrust: () => 'archivetrust',
} as const;
