import type { EventMetadata, RecordedEvent, TesseraEvent } from '@tessera/events';
import type { Decider } from '@tessera/domain';
import { ExpectedRevisionConflict, type AppendResult, type EventStore, type ExpectedRevision } from './event-store.js';
import { InvariantBroken } from '@tessera/contracts';

export interface CommandHandling<Command, State, Event extends TesseraEvent> {
  readonly stream: string;
  readonly decider: Decider<Command, State, Event>;
  /**
   * The command, made from the state read. Checks and choices that need the state belong here
   * (which credential to rotate, whether a family's credential is still active): a retry after
   * a conflict makes them again on the newer state.
   */
  readonly command: (state: State) => Command;
  /**
   * How the state is read: 'stream' folds every event (the default); 'last-event' evolves the
   * initial state with the newest event alone, for streams whose events each carry the whole
   * state (token families); `fromSnapshot` reads the newest `within` events and folds from the
   * newest of them that `startsFold` (a snapshot, or the stream's first event), for streams whose
   * decider appends a snapshot at least every `within` events. A stream written before it did
   * (no such event among the newest `within`) is read whole.
   */
  readonly read?: 'stream' | 'last-event' | { readonly fromSnapshot: { readonly within: number; readonly startsFold: (event: Event) => boolean } };
  /**
   * The stream's name was made just now (a fresh random id): it is known to be empty, so the
   * first attempt reads nothing and appends with no_stream. A retry reads as `read` says.
   */
  readonly newStream?: boolean;
  readonly metadata: EventMetadata | ((event: Event) => EventMetadata);
  /** After the decision, before the append: the last moment to fail having changed nothing. */
  readonly beforeAppend?: (events: readonly Event[], state: State) => void;
  /**
   * What a conflict means here: another writer appended to the stream after the read. `retries`
   * reads and decides again that many times, so the domain answers on the newer state. Once
   * they are used up, `answer` turns the conflict into the domain's own error; without it the
   * ExpectedRevisionConflict itself is thrown.
   */
  readonly onConflict?: { readonly retries?: number; readonly answer?: (conflict: ExpectedRevisionConflict) => Error };
}

export interface CommandOutcome<State, Event> {
  /** What was appended: empty when the decider had nothing to change. */
  readonly events: readonly Event[];
  /** The state after those events. */
  readonly state: State;
  /** Undefined when nothing was appended. */
  readonly appended: AppendResult | undefined;
}

/** What the handler needs of a store. */
export type CommandStore = Pick<EventStore, 'readStream' | 'append'>;

/**
 * The one way a command is handled: read the stream, decide (pure), append with the revision
 * read, and turn a conflict into the domain's answer. Errors of the decider and of the store
 * other than a conflict pass through unchanged.
 */
export async function handleCommand<Command, State, Event extends TesseraEvent>(
  store: CommandStore,
  handling: CommandHandling<Command, State, Event>,
): Promise<CommandOutcome<State, Event>> {
  const { stream, decider, metadata } = handling;
  const retries = handling.onConflict?.retries ?? 0;
  for (let attempt = 0; ; attempt += 1) {
    const { state, revision } =
      attempt === 0 && handling.newStream ? { state: decider.initialState(), revision: 'no_stream' as const } : await readState(store, handling);
    const events = decider.decide(handling.command(state), state);
    if (events.length === 0) return { events, state, appended: undefined };
    handling.beforeAppend?.(events, state);
    const metadataOf = typeof metadata === 'function' ? metadata : () => metadata;
    try {
      const appended = await store.append(stream, events.map((event) => ({ event, metadata: metadataOf(event) })), { expectedRevision: revision });
      return { events, state: events.reduce(decider.evolve, state), appended };
    } catch (error) {
      if (!(error instanceof ExpectedRevisionConflict)) throw error;
      if (attempt < retries) continue;
      throw handling.onConflict?.answer?.(error) ?? error;
    }
  }
}

async function readState<Command, State, Event extends TesseraEvent>(
  store: CommandStore,
  handling: CommandHandling<Command, State, Event>,
): Promise<{ state: State; revision: ExpectedRevision }> {
  const { decider } = handling;
  const recorded = await readFoldedEvents(store, handling);
  const last = recorded[recorded.length - 1];
  if (!last) return { state: decider.initialState(), revision: 'no_stream' };
  // The stream name says which rules apply to it; an event those rules do not know is a corrupt stream, never folded in.
  const state = recorded.reduce((folded, { event }) => {
    if (!decider.isEvent(event)) throw new InvariantBroken(`stream ${handling.stream} holds a ${event.type} event, which its rules do not know`);
    return decider.evolve(folded, event);
  }, decider.initialState());
  return { state, revision: last.revision };
}

/** The events a state is folded from, oldest first. */
async function readFoldedEvents<Command, State, Event extends TesseraEvent>(store: CommandStore, handling: CommandHandling<Command, State, Event>): Promise<RecordedEvent[]> {
  const { read, stream, decider } = handling;
  if (read === 'last-event') return store.readStream(stream, { direction: 'backwards', maxCount: 1 });
  if (read === undefined || read === 'stream') return store.readStream(stream);
  const { within, startsFold } = read.fromSnapshot;
  const newest = await store.readStream(stream, { direction: 'backwards', maxCount: within });
  const start = newest.findIndex(({ event }) => decider.isEvent(event) && startsFold(event));
  if (start >= 0) return newest.slice(0, start + 1).reverse();
  // Fewer events than asked for: that is the whole stream.
  if (newest.length < within) return newest.reverse();
  return store.readStream(stream);
}
