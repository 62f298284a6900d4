import { ssfStreamEventTypes, type RecordedEvent, type SsfStreamEvent } from '@tessera/events';
import { logReader, type LogReader } from '@tessera/event-store';
import { Broadcast } from './broadcast.js';
import { evolveStream, initialStreamState, type LiveStream, type StreamState } from './stream-decider.js';

/**
 * The streams as stream management answers them (GET, status), folded from the log. A change made
 * through this process is answered once the directory has read it back (`whenApplied`), so a
 * receiver reads its own writes.
 */
export class StreamDirectory {
  private readonly streams = new Map<string, StreamState>();
  private appliedTo = -1n;
  private readonly applied = new Broadcast();
  private firstStream: (() => void) | undefined;
  private streamSeen = false;
  /** Resolves once a stream exists (or existed): delivery, and its read of the log, waits for it. */
  readonly whenAnyStream = new Promise<void>((resolve) => (this.firstStream = resolve));

  /** True once a stream exists (or existed). */
  get anyStream(): boolean {
    return this.streamSeen;
  }

  get reader(): LogReader {
    return logReader(ssfStreamEventTypes, (recorded) => this.apply(recorded));
  }

  apply(recorded: RecordedEvent<SsfStreamEvent>): void {
    const { event } = recorded;
    const next = evolveStream(this.streams.get(event.streamId) ?? initialStreamState(), event);
    if (next.status === 'deleted') this.streams.delete(event.streamId);
    else this.streams.set(event.streamId, next);
    this.streamSeen = true;
    this.firstStream?.();
    if (recorded.position > this.appliedTo) this.appliedTo = recorded.position;
    this.applied.wake();
  }

  /** The receiver's stream, or undefined: another receiver's stream is not told apart from none. */
  stream(receiverId: string, streamId: string): LiveStream | undefined {
    const stream = this.streams.get(streamId);
    return stream?.status === 'live' && stream.receiverId === receiverId ? stream : undefined;
  }

  streamsOf(receiverId: string): LiveStream[] {
    return [...this.streams.values()].filter((stream): stream is LiveStream => stream.status === 'live' && stream.receiverId === receiverId);
  }

  /** Resolves once the event at `position` has been applied, or after `timeoutMs` (the answer is then as of before it). */
  async whenApplied(position: bigint, timeoutMs = 5_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (this.appliedTo < position) {
      const left = deadline - performance.now();
      if (left <= 0) return;
      await this.applied.wait(left);
    }
  }
}
