/**
 * The Security Event Token (RFC 8417) event types Tessera's Shared Signals transmitter sends: SSF
 * 1.0's and CAEP 1.0's, and Tessera's own rotation. The transmitter and every receiver read them
 * from here, so both ends name each type once.
 */
export const ssfEventTypes = {
  sessionRevoked: 'https://schemas.openid.net/secevent/caep/event-type/session-revoked',
  credentialChange: 'https://schemas.openid.net/secevent/caep/event-type/credential-change',
  tokenClaimsChange: 'https://schemas.openid.net/secevent/caep/event-type/token-claims-change',
  verification: 'https://schemas.openid.net/secevent/ssf/event-type/verification',
  /**
   * Tessera's own: a refresh rotated a family, so its access tokens below `generation` are
   * refused. One SET per refresh per stream that follows the family's account or the family, so
   * a stream gets it only when it names it in `events_requested`.
   */
  tokenRotated: 'urn:tessera:secevent:token-rotated',
} as const;
