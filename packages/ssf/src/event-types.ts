/** The URIs of the SSF 1.0 and CAEP 1.0 event types this transmitter sends. */
export const ssfEventTypes = {
  sessionRevoked: 'https://schemas.openid.net/secevent/caep/event-type/session-revoked',
  credentialChange: 'https://schemas.openid.net/secevent/caep/event-type/credential-change',
  tokenClaimsChange: 'https://schemas.openid.net/secevent/caep/event-type/token-claims-change',
  verification: 'https://schemas.openid.net/secevent/ssf/event-type/verification',
} as const;

/** What a stream may request: the CAEP events. Verification events are always delivered (SSF 1.0, section 8.1.4). */
export const eventsSupported: readonly string[] = [ssfEventTypes.sessionRevoked, ssfEventTypes.credentialChange, ssfEventTypes.tokenClaimsChange];

export const deliveryMethods = { push: 'urn:ietf:rfc:8935', poll: 'urn:ietf:rfc:8936' } as const;
