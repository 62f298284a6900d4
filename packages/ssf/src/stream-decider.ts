import { isEventOf, ssfStreamEventTypes, type SsfStreamConfiguration, type SsfStreamEvent, type SsfStreamSnapshotted, type SsfStreamStatus, type SsfSubject } from '@tessera/events';
import { assertNever, type Decider } from '@tessera/domain';
import { internedConfiguration } from './interned-configuration.js';
import { secondsToWait } from './minimum-interval.js';
import { SsfStreamExists, InvalidSsfRequest, SsfStreamNotFound, SsfVerificationTooSoon } from './ssf-errors.js';

/** Most subjects one stream follows: what a stream costs in memory stays bounded. */
export const maxSubjectsPerStream = 10_000;

/**
 * A snapshot of the whole stream follows every this many of its events: a command reads the stream
 * back from its newest snapshot (at most `snapshotEvery + 1` events), however long its history of
 * subjects added and removed, statuses and updates grows.
 */
export const snapshotEvery = 100;

/** How many of a stream's newest events always hold its newest snapshot (or its creation). */
export const snapshotReadBack = snapshotEvery + 1;

/** A subject as a map key: `account:<id>` or `family:<id>`. */
export const subjectKey = (subject: SsfSubject): string => (subject.kind === 'account' ? `account:${subject.accountId}` : `family:${subject.familyId}`);

/** The subject a key names. */
const subjectOf = (key: string): SsfSubject => (key.startsWith('account:') ? { kind: 'account', accountId: key.slice('account:'.length) } : { kind: 'family', familyId: key.slice('family:'.length) });

/** One stream (`ssfstream-<id>`), owned by one receiver. */
export type StreamState =
  | { readonly status: 'none' }
  | {
      readonly status: 'live';
      readonly streamId: string;
      readonly receiverId: string;
      readonly configuration: SsfStreamConfiguration;
      readonly streamStatus: SsfStreamStatus;
      readonly reason: string | undefined;
      /** Subject keys. Folds own their state: evolve adds to and removes from this set in place. */
      readonly subjects: Set<string>;
      /** Epoch seconds of the latest verification request, if any. */
      readonly lastVerificationAt?: number | undefined;
      /** The stream's own events since its newest snapshot or its creation. */
      readonly sinceSnapshot: number;
    }
  | { readonly status: 'deleted'; readonly streamId: string; readonly receiverId: string };

export type LiveStream = Extract<StreamState, { status: 'live' }>;

interface Owned {
  readonly receiverId: string;
  readonly now: number;
}

export type StreamCommand =
  | (Owned & { readonly type: 'CreateStream'; readonly streamId: string; readonly configuration: SsfStreamConfiguration })
  | (Owned & { readonly type: 'UpdateStream'; readonly configuration: SsfStreamConfiguration })
  | (Owned & { readonly type: 'SetStreamStatus'; readonly streamStatus: SsfStreamStatus; readonly reason?: string | undefined; readonly by: 'receiver' | 'transmitter'; readonly skippedTo?: bigint | undefined })
  | (Owned & { readonly type: 'AddSubject'; readonly subject: SsfSubject })
  | (Owned & { readonly type: 'RemoveSubject'; readonly subject: SsfSubject })
  | (Owned & { readonly type: 'DeleteStream' })
  /**
   * Decided on the stream as the directory holds it and appended to the stream's verifications
   * (`ssfverifications-<id>`), not to the stream itself: see ssfStreams.verifications.
   */
  | (Owned & { readonly type: 'RequestVerification'; readonly state?: string | undefined; readonly minIntervalSeconds: number });

export const initialStreamState = (): StreamState => ({ status: 'none' });

export function evolveStream(state: StreamState, event: SsfStreamEvent): StreamState {
  switch (event.type) {
    case 'SsfStreamCreated':
      return { status: 'live', streamId: event.streamId, receiverId: event.receiverId, configuration: internedConfiguration(event.configuration), streamStatus: 'enabled', reason: undefined, subjects: new Set(), sinceSnapshot: 0 };
    case 'SsfStreamSnapshotted':
      // The whole stream: a fold may begin here (what came before it may have left the hot log).
      return {
        status: 'live',
        streamId: event.streamId,
        receiverId: event.receiverId,
        configuration: internedConfiguration(event.configuration),
        streamStatus: event.status,
        reason: event.reason,
        subjects: new Set(event.subjects.map(subjectKey)),
        // Verifications are recorded apart from the stream: a fold that saw them keeps what it saw.
        ...(state.status === 'live' && state.lastVerificationAt !== undefined ? { lastVerificationAt: state.lastVerificationAt } : {}),
        sinceSnapshot: 0,
      };
    case 'SsfStreamUpdated':
      return state.status === 'live' ? { ...state, configuration: internedConfiguration(event.configuration), sinceSnapshot: state.sinceSnapshot + 1 } : state;
    case 'SsfStreamStatusChanged':
      return state.status === 'live' ? { ...state, streamStatus: event.status, reason: event.reason, sinceSnapshot: state.sinceSnapshot + 1 } : state;
    case 'SsfSubjectAdded':
      if (state.status !== 'live') return state;
      state.subjects.add(subjectKey(event.subject));
      return { ...state, sinceSnapshot: state.sinceSnapshot + 1 };
    case 'SsfSubjectRemoved':
      if (state.status !== 'live') return state;
      state.subjects.delete(subjectKey(event.subject));
      return { ...state, sinceSnapshot: state.sinceSnapshot + 1 };
    case 'SsfStreamDeleted':
      return { status: 'deleted', streamId: event.streamId, receiverId: event.receiverId };
    case 'SsfVerificationRequested':
      return state.status === 'live' ? { ...state, lastVerificationAt: Math.max(state.lastVerificationAt ?? event.at, event.at) } : state;
    default:
      return assertNever(event);
  }
}

/** The stream as its owner may see it; anything else (absent, deleted, another receiver's) is the same 404. */
function owned(state: StreamState, receiverId: string): LiveStream {
  if (state.status !== 'live' || state.receiverId !== receiverId) throw new SsfStreamNotFound();
  return state;
}

/**
 * The decision, followed by a snapshot of the stream as it will stand when the change is its
 * `snapshotEvery`th event since the last snapshot (appended with it, in one append): so the newest
 * `snapshotReadBack` events of a stream always hold a snapshot or its creation.
 */
export function decideStream(command: StreamCommand, state: StreamState): SsfStreamEvent[] {
  const events = decideChange(command, state);
  if (state.status !== 'live' || events.length === 0 || command.type === 'RequestVerification') return events;
  if (state.sinceSnapshot + events.length < snapshotEvery) return events;
  const after = snapshotAfter(state, events, command.now);
  return after === undefined ? events : [...events, after];
}

/** The stream after `events`, as a snapshot; undefined when they delete it. Leaves `state` as it is (folds change subjects in place). */
function snapshotAfter(state: LiveStream, events: readonly SsfStreamEvent[], now: number): SsfStreamSnapshotted | undefined {
  const subjects = new Set(state.subjects);
  let stream: LiveStream = { ...state, subjects };
  for (const event of events) {
    const next = evolveStream(stream, event);
    if (next.status !== 'live') return undefined;
    stream = next;
  }
  return {
    type: 'SsfStreamSnapshotted',
    v: 1,
    streamId: stream.streamId,
    receiverId: stream.receiverId,
    configuration: stream.configuration,
    status: stream.streamStatus,
    ...(stream.reason === undefined ? {} : { reason: stream.reason }),
    subjects: [...stream.subjects].map(subjectOf),
    at: now,
  };
}

function decideChange(command: StreamCommand, state: StreamState): SsfStreamEvent[] {
  const base = { v: 1 as const, receiverId: command.receiverId, at: command.now };
  switch (command.type) {
    case 'CreateStream':
      // A fresh random id: a stream that exists already is a bug, not a caller's mistake.
      if (state.status !== 'none') throw new SsfStreamExists();
      return [{ type: 'SsfStreamCreated', ...base, streamId: command.streamId, configuration: command.configuration }];
    case 'UpdateStream': {
      const stream = owned(state, command.receiverId);
      return [{ type: 'SsfStreamUpdated', ...base, streamId: stream.streamId, configuration: command.configuration }];
    }
    case 'SetStreamStatus': {
      const stream = owned(state, command.receiverId);
      // The transmitter pauses only an enabled stream: a receiver's own pause or disable stands.
      if (command.by === 'transmitter' && stream.streamStatus !== 'enabled') return [];
      if (command.by === 'receiver' && stream.streamStatus === command.streamStatus && stream.reason === command.reason) return [];
      return [
        {
          type: 'SsfStreamStatusChanged',
          ...base,
          streamId: stream.streamId,
          status: command.streamStatus,
          ...(command.reason === undefined ? {} : { reason: command.reason }),
          by: command.by,
          ...(command.skippedTo === undefined ? {} : { skippedTo: command.skippedTo.toString() }),
        },
      ];
    }
    case 'AddSubject': {
      const stream = owned(state, command.receiverId);
      if (stream.subjects.has(subjectKey(command.subject))) return [];
      if (stream.subjects.size >= maxSubjectsPerStream) throw new InvalidSsfRequest('subject', `a stream follows at most ${maxSubjectsPerStream} subjects`);
      return [{ type: 'SsfSubjectAdded', ...base, streamId: stream.streamId, subject: command.subject }];
    }
    case 'RemoveSubject': {
      const stream = owned(state, command.receiverId);
      if (!stream.subjects.has(subjectKey(command.subject))) return [];
      return [{ type: 'SsfSubjectRemoved', ...base, streamId: stream.streamId, subject: command.subject }];
    }
    case 'DeleteStream': {
      const stream = owned(state, command.receiverId);
      return [{ type: 'SsfStreamDeleted', ...base, streamId: stream.streamId }];
    }
    case 'RequestVerification': {
      const stream = owned(state, command.receiverId);
      // Epoch seconds here: the same count as the poll limiter's, in ms.
      const wait = secondsToWait(stream.lastVerificationAt === undefined ? undefined : stream.lastVerificationAt * 1000, command.now * 1000, command.minIntervalSeconds * 1000);
      if (wait > 0) throw new SsfVerificationTooSoon(wait);
      return [{ type: 'SsfVerificationRequested', ...base, streamId: stream.streamId, ...(command.state === undefined ? {} : { state: command.state }) }];
    }
    default:
      return assertNever(command);
  }
}

/** Where a fold of a stream may begin: its creation, or any snapshot. */
export const startsStreamFold = (event: SsfStreamEvent): boolean => event.type === 'SsfStreamCreated' || event.type === 'SsfStreamSnapshotted';

export const streamDecider: Decider<StreamCommand, StreamState, SsfStreamEvent> = {
  isEvent: (event) => isEventOf(ssfStreamEventTypes, event),
  decide: decideStream,
  evolve: evolveStream,
  initialState: initialStreamState,
};
