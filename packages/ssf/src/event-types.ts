/** The URIs of the SSF 1.0 and CAEP 1.0 event types this transmitter sends. */
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

/** What a stream may request. Verification events are always delivered (SSF 1.0, section 8.1.4). */
export const eventsSupported: readonly string[] = [ssfEventTypes.sessionRevoked, ssfEventTypes.credentialChange, ssfEventTypes.tokenClaimsChange, ssfEventTypes.tokenRotated];

/**
 * What a stream gets when its receiver names no `events_requested`: the CAEP events. Rotations
 * are as frequent as refreshes, so a receiver asks for them by name.
 */
export const eventsByDefault: readonly string[] = [ssfEventTypes.sessionRevoked, ssfEventTypes.credentialChange, ssfEventTypes.tokenClaimsChange];

export const deliveryMethods = { push: 'urn:ietf:rfc:8935', poll: 'urn:ietf:rfc:8936' } as const;
