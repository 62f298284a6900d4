import type { TesseraEvent } from '@tessera/events';

/**
 * A stream's rules as three pure functions (emmett's decider): what a command turns into, how
 * an event changes the state, and the state of a stream with no events. The command handler
 * next to the event-store port reads a stream, decides and appends with these; the domain
 * itself never sees the store.
 */
export interface Decider<Command, State, Event extends TesseraEvent> {
  /** Whether an event read from a stream is one of this decider's: a stream holding another is refused, not cast. */
  readonly isEvent: (event: TesseraEvent) => event is Event;
  /** Throws a DomainError when the command is refused in this state; an empty list changes nothing. */
  readonly decide: (command: Command, state: State) => readonly Event[];
  readonly evolve: (state: State, event: Event) => State;
  readonly initialState: () => State;
}
