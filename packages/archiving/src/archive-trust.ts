import { pinsFromAnchors, type ArchiveHead, type ArchivePins } from '@tessera/archive';
import { streams, type ArchiveTrustEvent, type RecordedEvent } from '@tessera/events';
import type { EventStore } from '@tessera/event-store';

/**
 * The archive's trust anchors, kept where the archive folder cannot reach them: in the event log,
 * in a stream retention never archives. The archiver records a key before it signs with it, and
 * the manifest's head after each entry it adds; every check of the archive (the archiver's before
 * it acts, the queries', `tessera archive verify`'s beside the data folder) is made against them.
 */
export interface ArchiveTrust {
  pins(): Promise<ArchivePins>;
  trustKey(fingerprint: string, source: 'made' | 'adopted', atMs: number): Promise<void>;
  recordHead(head: ArchiveHead, atMs: number): Promise<void>;
}

export const logPinsSource = 'the event log';

/** The pins the log's anchor events make: every key recorded, and the newest head. */
export function pinsOf(recorded: readonly RecordedEvent[]): ArchivePins {
  return pinsFromAnchors(
    recorded.map(({ event }) => event),
    logPinsSource,
  );
}

/** The pins as the log holds them now. */
export async function readArchivePins(store: Pick<EventStore, 'readStream'>): Promise<ArchivePins> {
  return pinsOf(await store.readStream(streams.archiveTrust()));
}

/**
 * The anchors in `reader`'s log, written through `writer` (opened when first needed: a reader's
 * thread may hold a read-only store). Appends go after the stream's last revision as read, so two
 * processes archiving into one folder cannot both record a head unseen by the other.
 */
export function archiveTrustIn(reader: Pick<EventStore, 'readStream'>, writer: () => Promise<Pick<EventStore, 'append'>>): ArchiveTrust {
  const append = async (event: ArchiveTrustEvent) => {
    const stream = streams.archiveTrust();
    const [last] = await reader.readStream(stream, { direction: 'backwards', maxCount: 1 });
    await (await writer()).append(stream, [{ event, metadata: { actor: 'archiver' } }], { expectedRevision: last === undefined ? 'no_stream' : last.revision });
  };
  const seconds = (atMs: number) => Math.floor(atMs / 1000);
  return {
    pins: () => readArchivePins(reader),
    trustKey: (fingerprint, source, atMs) => append({ type: 'ArchiveKeyTrusted', v: 1, fingerprint, source, at: seconds(atMs) }),
    recordHead: (head, atMs) => append({ type: 'ArchiveHeadRecorded', v: 1, sequence: head.sequence, sha256: head.sha256, at: seconds(atMs) }),
  };
}
