import { EventStoreDBClient } from '@eventstore/db-client';
import type { LogRemoval, LogRetention } from '@tessera/event-store';
import { translateEsdbError } from './esdb-mapping.js';

/** The part of the client retention uses: tests hand it a double, without a server. */
export type EsdbRetentionClient = Pick<EventStoreDBClient, 'setStreamMetadata' | 'dispose'>;

/**
 * Removes archived events from EventStoreDB the way it removes events: by stream metadata. Each
 * stream gets `$tb` (truncateBefore) set to the revision of the first event it keeps, so a closed
 * family's whole stream, or a rolling stream's older events, stop being read at once, and the
 * next scavenge frees their space (docs/operations.md: schedule scavenges). Setting `$tb` again to
 * the same revision is harmless, so a run repeated after a crash changes nothing.
 */
export class EsdbLogRetention implements LogRetention {
  private readonly client: EsdbRetentionClient;

  constructor(options: { readonly connectionString: string }, client?: EsdbRetentionClient) {
    this.client = client ?? EventStoreDBClient.connectionString(options.connectionString);
  }

  async remove(removals: readonly LogRemoval[]): Promise<void> {
    for (const removal of removals) {
      try {
        await this.client.setStreamMetadata(removal.stream, { truncateBefore: Number(removal.truncateBefore) });
      } catch (error) {
        throw translateEsdbError(error, { stream: removal.stream, operation: 'setStreamMetadata' });
      }
    }
  }

  /** The server frees space when it scavenges, which the operator schedules. */
  async reclaim(): Promise<void> {}

  bytesOnDisk(): undefined {
    return undefined;
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }
}
