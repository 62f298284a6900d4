export { accessAt, accessEventOf, effectiveAt, grantOf, type AccessAt, type AccessEvent, type UsableFamily, type UsableLegacyToken } from './access-at.js';
export { auditIndexFile, wireAudit, type AuditReadModel } from './audit-composition.js';
export { AuditIndex, type AccessAtAnswer, type ApplyOutcome, type EventPage } from './audit-index.js';
export { indexedEventOf, type AuditRow, type IndexedEvent } from './audit-row.js';
export { AccessAtResponse, AuditEventRow, AuditEventsResponse, accessAtBody, parseAccessAtQuery } from './audit-answers.js';
export { catchUpIndex } from './catch-up.js';
export { InvalidQuery, decodeCursor, encodeCursor, eventQueryLimit, eventTypes, parseEventQuery, parseInstant, type EventQuery, type RawParameters } from './event-query.js';
export { followIntoIndex, type IndexFollower, type IndexFollowerOptions } from './index-follower.js';
