import type { RecordedEvent } from '@tessera/events';
import { accessEventOf, type AccessEvent } from './access-at.js';

/**
 * One row of the audit trail, as `GET /admin/v1/events` and `tessera audit` print it. Ids, times
 * and who asked: never a secret or a keyed hash (no payload is copied, only these fields).
 */
export interface AuditRow {
  /** The event's global log position, a decimal string: EventStoreDB's are 64-bit. */
  readonly position: string;
  readonly type: string;
  /** When the log recorded it, ISO 8601 UTC (see `time` in docs/audit.md: never earlier than the row before). */
  readonly time: string;
  readonly account_id: string | null;
  readonly family_id: string | null;
  readonly generation: number | null;
  readonly reason: string | null;
  readonly request_id: string | null;
  readonly source_address: string | null;
  /** Who, when not a client request: `cli`, an issuer's name, an admin token (`admin:<id>`). */
  readonly actor: string | null;
}

/** What the index keeps of an event: the row, what the filters match on, and its access event. */
export interface IndexedEvent {
  readonly position: bigint;
  readonly type: string;
  /** recordedAt, epoch milliseconds. */
  readonly recordedAt: number;
  readonly accountId: string | undefined;
  readonly familyId: string | undefined;
  readonly generation: number | undefined;
  readonly reason: string | undefined;
  readonly requestId: string | undefined;
  readonly sourceAddress: string | undefined;
  readonly actor: string | undefined;
  /** The API Login ID the event names; a family event that names none is matched through its family. */
  readonly apiLoginId: string | undefined;
  readonly apiId: string | undefined;
  readonly access: AccessEvent | undefined;
}

/**
 * Reads the indexed fields by name rather than per type, so that an event type added later (an
 * admin action, a cut) is filtered by account, family or login without a change here.
 */
export function indexedEventOf(recorded: RecordedEvent): IndexedEvent {
  // Every event is a plain JSON object; reading it as one lets fields be looked up by name.
  const fields: Readonly<Record<string, unknown>> = recorded.event;
  const metadata = recorded.metadata;
  // A failure count's row says what it counted in `reason`, and whose login it was in the login columns.
  const failures = recorded.event.type === 'AuthenticationFailuresCounted' ? recorded.event : undefined;
  // A Shared Signals subject names the account or family a receiver follows: its rows are found by them.
  const subject: Readonly<Record<string, unknown>> = typeof fields.subject === 'object' && fields.subject !== null ? (fields.subject as Record<string, unknown>) : {};
  return {
    position: recorded.position,
    type: recorded.event.type,
    recordedAt: recorded.recordedAt,
    accountId: text(fields.accountId) ?? text(subject.accountId) ?? text(metadata.accountId),
    familyId: text(fields.familyId) ?? text(subject.familyId),
    generation: typeof fields.generation === 'number' && text(fields.familyId) !== undefined ? fields.generation : undefined,
    reason: failures ? `${failures.count} failed ${failures.interface} authentications in the minute from ${new Date(failures.minute * 1000).toISOString()}` : text(fields.reason),
    requestId: text(metadata.requestId),
    sourceAddress: text(metadata.sourceAddress),
    actor: text(metadata.actor),
    apiLoginId: failures ? (failures.interface === 'v5' ? failures.clientId : undefined) : text(fields.apiLoginId),
    apiId: failures ? (failures.interface === 'v1' ? failures.clientId : undefined) : text(fields.apiId),
    access: accessEventOf(recorded.event),
  };
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
