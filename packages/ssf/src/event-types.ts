import { ssfEventTypes } from '@tessera/contracts';

export { ssfEventTypes };

/** What a stream may request. Verification events are always delivered (SSF 1.0, section 8.1.4). */
export const eventsSupported: readonly string[] = [ssfEventTypes.sessionRevoked, ssfEventTypes.credentialChange, ssfEventTypes.tokenClaimsChange, ssfEventTypes.tokenRotated];

/**
 * What a stream gets when its receiver names no `events_requested`: the CAEP events. Rotations
 * are as frequent as refreshes, so a receiver asks for them by name.
 */
export const eventsByDefault: readonly string[] = [ssfEventTypes.sessionRevoked, ssfEventTypes.credentialChange, ssfEventTypes.tokenClaimsChange];

export const deliveryMethods = { push: 'urn:ietf:rfc:8935', poll: 'urn:ietf:rfc:8936' } as const;
