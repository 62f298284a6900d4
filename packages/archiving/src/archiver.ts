import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  appendEntry,
  ArchiveUntrusted,
  liveSegments,
  loadOrCreateArchiveKey,
  manifestDir,
  readSegment,
  removableEvents,
  removeLeftovers,
  retentionOf,
  SegmentHashes,
  segmentEntryBody,
  segmentFileName,
  segmentsDir,
  sha256,
  verifyArchive,
  writeSegment,
  type ArchiveHead,
  type ArchiveKey,
  type ArchivedEvent,
  type ArchivePins,
  type ArchiveVerification,
  type RetainedEvent,
  type RetentionSettings,
  type SegmentEntry,
  type StoredEntry,
} from '@tessera/archive';
import type { RecordedEvent } from '@tessera/events';
import type { EventStore, LogRemoval, LogRetention } from '@tessera/event-store';
import type { ArchiveTrust } from './archive-trust.js';
import type { HotIndex } from './hot-index.js';
import { InvariantBroken, CodedError } from '@tessera/contracts';

export interface ArchiverSettings extends RetentionSettings {
  /** TESSERA_AUDIT_RETENTION, seconds: segments wholly older are deleted, on the record. */
  readonly auditRetentionSeconds: number;
  /** Most events one run archives (one segment): bounds a run's time and memory. */
  readonly maxEventsPerRun?: number;
}

export interface ArchiverDeps {
  /** The log, read only: to find what may leave it. */
  readonly store: Pick<EventStore, 'readAll' | 'readStream' | 'positionBefore'>;
  /** Removes from the hot log what was archived. */
  readonly retention: LogRetention;
  /** The audit index: its position, its rows for the archive, and their removal. */
  readonly index: HotIndex;
  readonly archiveDir: string;
  /** The data folder's keys folder: the archive key's private half lives there. */
  readonly keysDir: string;
  readonly settings: ArchiverSettings;
  /**
   * The lowest position every other consumer of the log has got past (the relay's checkpoints,
   * this process's read models); undefined while one of them has not said. Nothing above it, nor
   * above the audit index's own position, is removed.
   */
  readonly consumersPast: () => bigint | undefined;
  /** The trust anchors in the log: the keys whose entries count and the manifest's head. */
  readonly trust: ArchiveTrust;
  /** Segments this process has hashed (shared with its queries): one not touched since is not read again. */
  readonly hashes?: SegmentHashes;
  /** Called as each step of a run is done: tests kill the process there (kill -9) to prove a crash at any step loses nothing. */
  readonly onStep?: (step: ArchiverStep) => void;
}

/**
 * The archive folder has segments but no manifest/: whatever happened to it, nothing is archived,
 * deleted or removed from the hot log until an operator restores the manifest.
 */
export class ArchiveManifestMissing extends CodedError {
  readonly code = 'ERR_ARCHIVE_MANIFEST_MISSING';
  constructor(archiveDir: string) {
    super(`the archive folder ${archiveDir} holds segments but no manifest/ folder: archiving stops until it is restored (docs/audit.md, "The trust model")`);
    this.name = 'ArchiveManifestMissing';
  }
}

/** An archived event names a stream kept for good: it can never be removed from the hot log. */
export class KeptStreamRemoval extends CodedError {
  readonly code = 'ERR_KEPT_STREAM_REMOVAL';
  constructor(stream: string, position: bigint) {
    super(`refusing to remove the event at log position ${position} of ${stream}: that stream is kept for good`);
    this.name = 'KeptStreamRemoval';
  }
}

export interface ArchiveRunResult {
  /** Events archived and removed from the hot store by this run. */
  readonly archived: number;
  /** The manifest entry of the segment written, if any. */
  readonly segment: SegmentEntry | undefined;
  /** Segments deleted for being past TESSERA_AUDIT_RETENTION. */
  readonly deletedSegments: number;
  /** The removal of an earlier run that a crash interrupted, finished by this one: its events. */
  readonly finished: number;
  /** Epoch ms of the oldest event of a stream retention applies to still in the hot log, as this run saw it. */
  readonly oldestHotEventAt: number | undefined;
  /** Files in the archive folder Tessera did not write, left where they are (relative paths). */
  readonly foreign: readonly string[];
  /** The archive as verified against the pins before the run acted, with what the run added. */
  readonly verification: ArchiveVerification;
}

/** What a run keeps between runs (not part of the record: losing it costs one full scan of the hot log). */
interface ArchiverState {
  /** The newest segment entry whose events are removed from the hot store and the index. */
  readonly completedSequence: number;
  /** Every event at or before it is kept for good, archived, or held by a stream the scan will meet again. */
  readonly scanAfter: string | undefined;
}

/** The steps of a run, in order, as onStep names them. */
export const archiverSteps = ['segment-written', 'entry-appended', 'head-recorded', 'log-removed', 'index-removed', 'state-saved'] as const;
export type ArchiverStep = (typeof archiverSteps)[number];

const pageSize = 5000;

/**
 * One archiving run (docs/decisions/0017), in an order that survives a crash at any step:
 *
 * 1. finish the previous run's removal if a crash interrupted it (its segment is on the record);
 * 2. delete segments past TESSERA_AUDIT_RETENTION, recording the deletion first;
 * 3. find what may leave the hot log: events older than the hot window, at or below the position
 *    every consumer is past, of streams retention applies to, whole closed families and rolling
 *    streams' dead events;
 * 4. write them as a segment (temporary file, fsync, rename, fsync the folder), read it back and
 *    check it;
 * 5. record it in the manifest (signed, chained);
 * 6. only then remove them from the hot log and from the audit index, and give the space back.
 *
 * Until step 5 the events are hot only (a segment no entry lists is removed by the next run);
 * between 5 and 6 they are in both places, and queries count a position once; after 6 they are
 * in the archive only.
 *
 * Before any of it, the archive is verified against the anchors in the log (archive-trust.ts):
 * every entry signed by a key the log records, the chain, the recorded head still there, every
 * live segment's hash. A run acts only on entries that passed, records its own key before it signs
 * with it, and records the new head after each entry it adds. An archive that fails stops the run:
 * nothing is removed from the hot log and nothing is deleted.
 */
export class Archiver {
  private readonly hashes: SegmentHashes;

  constructor(private readonly deps: ArchiverDeps) {
    this.hashes = deps.hashes ?? new SegmentHashes();
  }

  async run(nowMs: number): Promise<ArchiveRunResult> {
    const { archiveDir, index, settings, trust } = this.deps;
    this.ensureFolders();
    const key = loadOrCreateArchiveKey(this.deps.keysDir, archiveDir);
    const pins = await this.pinned(key, nowMs);
    const verified = verifyArchive(archiveDir, { pins, hashes: this.hashes });
    if (!verified.ok) throw new ArchiveUntrusted(verified.firstBreak!);
    let entries: readonly StoredEntry[] = verified.stored;
    const { foreign } = removeLeftovers(archiveDir, entries);
    const state = this.loadState(entries);

    const finished = await this.finishInterrupted(entries, state, pins);
    // An entry past the recorded head is signed by a pinned key, so it is this archiver's own: written
    // just before a crash kept it from recording the head, or by a run this restored log never saw.
    if (verified.head !== undefined && (pins.head === undefined || verified.head.sequence > pins.head.sequence)) await trust.recordHead(verified.head, nowMs);
    const deletion = await this.deleteExpired(entries, nowMs, key);
    if (deletion !== undefined) entries = [...entries, deletion.stored];
    const deletedSegments = deletion?.count ?? 0;
    const summary = (archived: number, segment: SegmentEntry | undefined, oldestHotEventAt: number | undefined): ArchiveRunResult => ({
      archived,
      segment,
      deletedSegments,
      finished,
      oldestHotEventAt,
      foreign,
      verification: { ...verified, entries: entries.length, head: headOf(entries), headSha256: headOf(entries)?.sha256 ?? null, stored: entries, live: liveSegments(entries) },
    });

    const windowStart = nowMs - settings.hotWindowSeconds * 1000;
    const indexed = index.position();
    const consumers = this.deps.consumersPast();
    const beforeWindow = await this.deps.store.positionBefore(windowStart);
    // Nothing recorded before the window, or a consumer that has not said where it is: nothing may go.
    const limit = indexed === undefined || consumers === undefined || beforeWindow === undefined ? undefined : min(min(indexed, consumers), beforeWindow);
    const scanAfter = state.scanAfter === undefined ? undefined : BigInt(state.scanAfter);
    const found = limit === undefined ? { events: [], nextScanAfter: scanAfter, oldestHeld: undefined } : await this.findRemovable(scanAfter, limit, nowMs);
    const oldestHotEventAt = min(found.oldestHeld, await this.firstRecordedAfter(limit));

    if (found.events.length === 0) {
      this.saveState({ completedSequence: lastSegmentSequence(entries) ?? 0, scanAfter: found.nextScanAfter?.toString() });
      return summary(0, undefined, oldestHotEventAt);
    }

    const rows = index.rowsAt(found.events.map((event) => event.position));
    const archived: ArchivedEvent[] = [];
    for (const recorded of found.events) {
      const row = rows.get(recorded.position);
      // The index is past every position found (step 3), so it holds each one; one it lacks is a bug to see, not to archive around.
      if (row === undefined) throw new InvariantBroken(`the audit index has no row at log position ${recorded.position}: nothing archived`);
      // Closed streams hold no cut (cuts live on account streams, which stay): any other access event is kept.
      const access = row.access?.kind === 'tokens-cut' ? undefined : row.access;
      archived.push({ position: recorded.position, stream: recorded.stream, revision: recorded.revision, ...row, access });
    }
    const sequence = (entries[entries.length - 1]?.entry.sequence ?? 0) + 1;
    const file = segmentFileName(sequence);
    const facts = await writeSegment(join(archiveDir, file), archived);
    this.crash('segment-written');
    const stored = appendEntry(archiveDir, key, nowMs, { kind: 'segment', segment: segmentEntryBody(file, facts) }, entries[entries.length - 1]);
    entries = [...entries, stored];
    this.crash('entry-appended');
    await trust.recordHead(headOf(entries)!, nowMs);
    this.crash('head-recorded');
    await this.removeHot(archived);
    this.saveState({ completedSequence: stored.entry.sequence, scanAfter: found.nextScanAfter?.toString() });
    this.crash('state-saved');
    // Cast: appendEntry was handed a segment body, so it made a segment entry.
    return summary(archived.length, stored.entry as SegmentEntry, oldestHotEventAt);
  }

  /**
   * The pins to act on, from the log. The key this data folder holds is recorded before it signs
   * anything. A log with no anchors yet, beside an archive written before anchors were recorded,
   * takes that archive as it finds it, once, after checking it against itself: its keys are recorded
   * (as adopted, but for this folder's own), and its head.
   */
  private async pinned(key: ArchiveKey, nowMs: number): Promise<ArchivePins> {
    const { archiveDir, trust } = this.deps;
    let pins = await trust.pins();
    if (pins.keys.size === 0 && pins.head === undefined) {
      const found = verifyArchive(archiveDir, { hashes: this.hashes });
      if (!found.ok) throw new ArchiveUntrusted(found.firstBreak!);
      for (const fingerprint of found.keys) if (fingerprint !== key.fingerprint) await trust.trustKey(fingerprint, 'adopted', nowMs);
      if (found.head !== undefined) {
        if (found.keys.includes(key.fingerprint)) await trust.trustKey(key.fingerprint, 'made', nowMs);
        await trust.recordHead(found.head, nowMs);
      }
      pins = await trust.pins();
    }
    if (!pins.keys.has(key.fingerprint)) {
      await trust.trustKey(key.fingerprint, 'made', nowMs);
      pins = await trust.pins();
    }
    return pins;
  }

  /**
   * The archive's folders. A missing manifest/ beside segments stops here: every segment would look
   * unrecorded. (A manifest/ that the log's head says existed is the verification's break to name.)
   */
  private ensureFolders(): void {
    const { archiveDir } = this.deps;
    if (!existsSync(manifestDir(archiveDir))) {
      const segments = segmentsDir(archiveDir);
      if (existsSync(segments) && readdirSync(segments).some((name) => /^\d{8}\.parquet$/.test(name))) throw new ArchiveManifestMissing(archiveDir);
    }
    mkdirSync(segmentsDir(archiveDir), { recursive: true, mode: 0o700 });
    mkdirSync(manifestDir(archiveDir), { recursive: true, mode: 0o700 });
  }

  /** Checks the archive against the log's pins: the manifest always, the segments' hashes when asked (they are every byte of the archive). */
  async verify(segmentHashes: boolean): Promise<ArchiveVerification> {
    return verifyArchive(this.deps.archiveDir, { pins: await this.deps.trust.pins(), hashes: this.hashes, segmentHashes });
  }

  /**
   * Scans the log after `scanAfter` up to `limit` for streams retention applies to, and reads each
   * such stream whole to decide: a closed family goes whole, a rolling stream its dead events
   * but its newest. A stream that cannot go yet and will not be met again further on (its last
   * event is within the scan) holds the next scan's start below that event.
   */
  private async findRemovable(scanAfter: bigint | undefined, limit: bigint, nowMs: number): Promise<{ events: RecordedEvent[]; nextScanAfter: bigint | undefined; oldestHeld: number | undefined }> {
    const maxEvents = this.deps.settings.maxEventsPerRun ?? 200_000;
    const seen = new Set<string>();
    const events: RecordedEvent[] = [];
    let nextScanAfter: bigint = limit;
    let oldestHeld: number | undefined;
    let after = scanAfter;
    scan: for (;;) {
      const page = await this.deps.store.readAll({ ...(after === undefined ? {} : { after }), maxCount: pageSize });
      for (const recorded of page) {
        if (recorded.position > limit) break scan;
        after = recorded.position;
        if (retentionOf(recorded.stream) === 'kept' || seen.has(recorded.stream)) continue;
        seen.add(recorded.stream);
        const stream = await this.deps.store.readStream(recorded.stream);
        const retained = stream.map(toRetained);
        const removable = new Set(removableEvents(recorded.stream, retained, nowMs, this.deps.settings).map((event) => event.position));
        // Whole families only: one with an event past the limit waits until every consumer is past it.
        const overLimit = stream.some((event) => event.position > limit && removable.has(event.position));
        for (const event of stream) {
          if (removable.has(event.position) && !overLimit) events.push(event);
          else if (event.position <= limit && event.revision !== stream[stream.length - 1]!.revision) {
            oldestHeld = min(oldestHeld, event.recordedAt);
            if (retentionOf(event.stream) !== 'closing') nextScanAfter = min(nextScanAfter, event.position - 1n)!;
          }
        }
        const last = stream[stream.length - 1]!;
        if (!removable.has(last.position) || overLimit) {
          oldestHeld = min(oldestHeld, stream[0]!.recordedAt);
          // Met again only if its last event is still ahead of this scan.
          if (last.position <= limit) nextScanAfter = min(nextScanAfter, last.position - 1n)!;
        }
        if (events.length >= maxEvents) {
          nextScanAfter = min(nextScanAfter, recorded.position)!;
          break scan;
        }
      }
      if (page.length < pageSize) break;
    }
    events.sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
    return { events, nextScanAfter: nextScanAfter < 0n ? undefined : nextScanAfter, oldestHeld };
  }

  /** The time of the first event after `position`: the oldest event the window still holds. */
  private async firstRecordedAfter(position: bigint | undefined): Promise<number | undefined> {
    const [first] = await this.deps.store.readAll({ ...(position === undefined ? {} : { after: position }), maxCount: 1 });
    return first?.recordedAt;
  }

  /**
   * Removes archived events from the hot log, then from the index (each step repeatable). Only from
   * streams retention applies to, and each by its position within its stream: the store removes
   * nothing at a position that holds another stream's event.
   */
  private async removeHot(events: readonly Pick<ArchivedEvent, 'position' | 'stream' | 'revision' | 'familyId' | 'access'>[]): Promise<void> {
    const byStream = new Map<string, LogRemoval & { positions: bigint[] }>();
    for (const event of events) {
      if (retentionOf(event.stream) === 'kept') throw new KeptStreamRemoval(event.stream, event.position);
      const removal = byStream.get(event.stream) ?? { stream: event.stream, positions: [], truncateBefore: 0n };
      removal.positions.push(event.position);
      byStream.set(event.stream, { ...removal, truncateBefore: event.revision + 1n > removal.truncateBefore ? event.revision + 1n : removal.truncateBefore });
    }
    await this.deps.retention.remove([...byStream.values()]);
    this.crash('log-removed');
    const grants = new Set<string>();
    for (const event of events) {
      if (event.access?.kind === 'legacy-token-issued') grants.add(`@${event.position}`);
      else if (event.stream.startsWith('tokenfamily-') && event.familyId !== undefined) grants.add(event.familyId);
    }
    this.deps.index.forget(
      events.map((event) => event.position),
      [...grants],
    );
    this.crash('index-removed');
    await this.deps.retention.reclaim();
  }

  /**
   * Step 1: a segment on the record (verified) whose removal was not completed has it redone: one
   * past the state's last completed run (a crash), or past the head the log records (a crash before
   * the head was recorded, or a log restored from a copy older than the archive, which holds again
   * events the archive already has). Removal is repeatable: what is gone stays gone.
   */
  private async finishInterrupted(entries: readonly StoredEntry[], state: ArchiverState, pins: ArchivePins): Promise<number> {
    const pinnedThrough = pins.head?.sequence ?? 0;
    const pending = entries.filter(({ entry }) => entry.kind === 'segment' && (entry.sequence > state.completedSequence || entry.sequence > pinnedThrough));
    let finished = 0;
    for (const { entry } of pending) {
      if (entry.kind !== 'segment') continue;
      const events = await readSegment(join(this.deps.archiveDir, entry.segment.file));
      await this.removeHot(events);
      finished += events.length;
      this.saveState({ ...state, completedSequence: Math.max(state.completedSequence, entry.sequence) });
    }
    return finished;
  }

  /**
   * Step 2: segments wholly older than the audit retention are deleted, the deletion signed into
   * the manifest and its head recorded first. Computed from the verified entries: their times are
   * what their signatures cover.
   */
  private async deleteExpired(entries: readonly StoredEntry[], nowMs: number, key: ArchiveKey): Promise<{ stored: StoredEntry; count: number } | undefined> {
    const cutoff = nowMs - this.deps.settings.auditRetentionSeconds * 1000;
    const expired = liveSegments(entries).filter((entry) => Date.parse(entry.segment.max_time) < cutoff);
    if (expired.length === 0) return undefined;
    const stored = appendEntry(
      this.deps.archiveDir,
      key,
      nowMs,
      {
        kind: 'deletion',
        reason: `every event older than TESSERA_AUDIT_RETENTION (${this.deps.settings.auditRetentionSeconds} s): before ${new Date(cutoff).toISOString()}`,
        deleted: expired.map((entry) => ({ sequence: entry.sequence, file: entry.segment.file, sha256: entry.segment.sha256 })),
      },
      entries[entries.length - 1],
    );
    const after = [...entries, stored];
    await this.deps.trust.recordHead(headOf(after)!, nowMs);
    for (const entry of expired) {
      const file = join(this.deps.archiveDir, entry.segment.file);
      if (existsSync(file)) renameSync(file, `${file}.deleted`);
    }
    removeLeftovers(this.deps.archiveDir, after);
    return { stored, count: expired.length };
  }

  private stateFile(): string {
    return join(this.deps.archiveDir, 'archiver-state.json');
  }

  private loadState(entries: readonly StoredEntry[]): ArchiverState {
    try {
      // The archiver's own file; a damaged one only costs a scan from the start of the hot log.
      const parsed = JSON.parse(readFileSync(this.stateFile(), 'utf8')) as Partial<ArchiverState>;
      return { completedSequence: Number(parsed.completedSequence ?? 0), scanAfter: typeof parsed.scanAfter === 'string' ? parsed.scanAfter : undefined };
    } catch {
      // Runs are one at a time and each records its end, so only the last segment can be unfinished.
      return { completedSequence: Math.max(0, (lastSegmentSequence(entries) ?? 0) - 1), scanAfter: undefined };
    }
  }

  private saveState(state: ArchiverState): void {
    const file = this.stateFile();
    writeFileSync(`${file}.tmp`, `${JSON.stringify(state)}\n`, { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  }

  private crash(step: ArchiverStep): void {
    this.deps.onStep?.(step);
  }
}

function toRetained(recorded: RecordedEvent): RetainedEvent {
  // Every payload is a plain JSON object: the rule reads its fields by name.
  return { position: recorded.position, revision: recorded.revision, recordedAt: recorded.recordedAt, event: recorded.event as unknown as Readonly<Record<string, unknown>> };
}

/** The last entry's sequence and the SHA-256 of its file: what the log records as the head. */
function headOf(entries: readonly StoredEntry[]): ArchiveHead | undefined {
  const last = entries[entries.length - 1];
  return last === undefined ? undefined : { sequence: last.entry.sequence, sha256: sha256(last.bytes) };
}

function lastSegmentSequence(entries: readonly StoredEntry[]): number | undefined {
  const segments = entries.filter(({ entry }) => entry.kind === 'segment');
  return segments[segments.length - 1]?.entry.sequence;
}

function min<T extends number | bigint>(a: T | undefined, b: T | undefined): T | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a < b ? a : b;
}
