/**
 * The audit index's own thread: it follows the log (through a read-only store of its own), writes
 * the index, and answers the audit queries, so none of that runs on the thread that answers token
 * requests. Started by audit-thread.ts; speaks audit-thread-protocol.ts.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { ArchiveReader, ArchiveUntrusted, SegmentHashes, TrustedArchive, type ArchiveVerification } from '@tessera/archive';
import { Archiver, archiveTrustIn, readArchivePins, relayCheckpointsPast } from '@tessera/archiving';
import { archiveDirOf } from '@tessera/config';
import { EventStoreUnavailable, guardAvailability, type EventStore, type GuardedEventStore, type LogRetention } from '@tessera/event-store';
import { openEventStore, openLogRetention } from '@tessera/event-store-factory';
// The subpath: the kernel's index would load its logger and metrics into this thread for nothing.
import { currentBackgroundThread } from '@tessera/host/background-thread';
import { AuditQueries } from './archive-queries.js';
import { AuditIndex } from './audit-index.js';
import type { ArchiveState, AuditReply, AuditRequest, AuditThreadData, AuditThreadState } from './audit-thread-protocol.js';
import { followIntoIndex, type IndexFollower } from './index-follower.js';
import { AuditQueryOverBudget } from './query-budget.js';
import { InvariantBroken, errorCode } from '@tessera/contracts';
import { AuditIndexBehind } from './audit-index-behind.js';

const port = parentPort;
if (port === null) throw new InvariantBroken('audit-thread-worker.ts runs as a worker thread');
// Cast: the data audit-thread.ts hands this thread, in the shape it declares.
const data = workerData as AuditThreadData;
const send = (reply: AuditReply) => port.postMessage(reply);
const log = (level: 'info' | 'warn' | 'error', message: string, fields: Record<string, unknown> = {}) => send({ log: { level, message, fields } });

// Audit work takes the CPU token requests leave: on a shared core, an index catching up or a long
// query must not stretch a get-oauth-token's latency.
// Lowered by the thread's bootstrap (workerThreadEntry) before this module loaded.
const backgroundThread = currentBackgroundThread();

const index = AuditIndex.open(data.file);
if (index.rebuilt) log('warn', 'the audit index was unreadable or of another version: rebuilding it from the event log', { file: data.file });
let state: AuditThreadState = { position: index.position(), caughtUp: false, failure: undefined };
const publish = (next: Partial<AuditThreadState>) => {
  state = { ...state, ...next };
  send({ state });
};
publish({});

// The archive is read beside the index, verified against the anchors in the log (@tessera/archiving):
// an archive that fails is a 503 naming the break for every query that reaches into it, and an
// alert, never a stop of the index.
const archiveDir = archiveDirOf(data.config);
const hashes = new SegmentHashes();
const trusted = new TrustedArchive(
  archiveDir,
  () => {
    // Queries and runs come only once the index has caught up, which needs the store.
    if (store === undefined) throw new EventStoreUnavailable('the audit thread has not opened the event log yet');
    return readArchivePins(store);
  },
  hashes,
);
const reader = new ArchiveReader(trusted);
const queries = new AuditQueries(index, reader);
let archiveState: ArchiveState = {
  lastRunAt: undefined,
  lastRunFailure: undefined,
  hotLogBytes: undefined,
  indexBytes: 0,
  archiveBytes: 0,
  segments: 0,
  oldestHotEventAt: undefined,
  verifiedOk: undefined,
  verifyBreak: undefined,
  pins: undefined,
  foreign: [],
};
/** The archive as a verification found it: published for /metrics, the keys route and `archive status`. */
const publishVerification = (verification: ArchiveVerification, pins: ArchiveState['pins']) => {
  const totals = reader.totals();
  archiveState = {
    ...archiveState,
    archiveBytes: totals.bytes,
    segments: totals.segments,
    verifiedOk: verification.ok,
    verifyBreak: verification.firstBreak === undefined ? undefined : `${verification.firstBreak.file}: ${verification.firstBreak.problem}`,
    pins: pins ?? archiveState.pins,
  };
  publish({ archive: archiveState });
};
const pinsState = async (): Promise<ArchiveState['pins']> => {
  const pins = await readArchivePins(store!);
  return { keys: [...pins.keys], head: pins.head };
};
/** Checks the archive against its pins (the manifest; segments are hashed as queries first read them). */
async function checkArchive(options: { readonly full?: boolean } = {}): Promise<ArchiveVerification> {
  const verification = await trusted.verified(options);
  if (!verification.ok) log('error', 'the archive failed its verification against the anchors in the log: audit answers that reach into it are 503 until it is restored', { break: verification.firstBreak, archiveDir });
  publishVerification(verification, await pinsState());
  return verification;
}
/**
 * After a start, every live segment is hashed before a query would read it: in slices of about
 * 50 ms between the queries, so that a query seldom hashes a segment itself and never waits for the
 * whole archive.
 */
function hashSegmentsAhead(): void {
  inOrder(async () => {
    if (closed) return;
    try {
      if (await trusted.hashAhead(50)) setImmediate(hashSegmentsAhead);
    } catch (error) {
      if (!(error instanceof ArchiveUntrusted)) {
        // The folder unreadable for now: queries hash what they read, and the next run checks it all.
        log('warn', 'hashing the archive\'s segments ahead of queries stopped', { err: error instanceof Error ? error.message : String(error), archiveDir });
        return;
      }
      log('error', 'the archive failed its verification against the anchors in the log: audit answers that reach into it are 503 until it is restored', { break: error.found, archiveDir });
      archiveState = { ...archiveState, verifiedOk: false, verifyBreak: `${error.found.file}: ${error.found.problem}` };
      publish({ archive: archiveState });
    }
  });
}

/** A writable store, opened when the archiver first records an anchor: the thread follows the log read-only. */
let writer: EventStore | undefined;
const openWriter = async () => (writer ??= await openEventStore(data.config));
let retention: LogRetention | undefined;
let archiver: Archiver | undefined;
/** When the segments' hashes were last all checked (performance.now()): every segment's bytes, once a day. */
let fullVerifyAt: number | undefined;

let store: GuardedEventStore | undefined;
let follower: IndexFollower | undefined;
let closed = false;
const started = performance.now();

const fail = (error: unknown) => {
  const failure = error instanceof Error ? error.message : String(error);
  log('error', 'the audit index stopped following the log; the audit API answers 503 until the process restarts', { err: failure, file: data.file });
  publish({ failure });
};

async function follow(): Promise<void> {
  store = guardAvailability(await openEventStore(data.config, { readOnly: true }), {
    onChange: (availability) => {
      if (!availability.available) log('warn', 'the audit index lost the event store; it follows again once it is back', { cause: availability.cause });
    },
  });
  // Waits out an outage, as every start-up step that needs the store does.
  for (;;) {
    try {
      if (await index.forgetIfAnotherLog(store)) log('warn', 'the audit index was built from another event log: rebuilding it', { file: data.file });
      break;
    } catch (error) {
      if (!(error instanceof EventStoreUnavailable)) throw error;
      await store.whenAvailable();
    }
  }
  if (closed) return;
  follower = followIntoIndex(store, index, { onError: fail });
  await follower.caughtUp;
  await inOrderNow(async () => {
    await checkArchive();
  }).catch((error: unknown) => log('warn', 'the archive could not be checked against its anchors; audit queries check it again', { err: error instanceof Error ? error.message : String(error), archiveDir }));
  publish({ caughtUp: true, position: index.position() });
  hashSegmentsAhead();
  log('info', 'audit index caught up with the event log', { position: index.position()?.toString(), seconds: (performance.now() - started) / 1000, background_thread: backgroundThread ?? null });
}
follow().catch(fail);

// The position, for /metrics and for the routes' "catching up (at position …)": sent when it moved.
const positions = setInterval(() => {
  const position = index.position();
  if (position !== state.position) publish({ position });
}, 250);

async function close(): Promise<void> {
  closed = true;
  clearInterval(positions);
  await follower?.close();
  index.close();
  await retention?.close();
  await writer?.close();
  await store?.close();
}

/**
 * The relay's checkpoints in this data folder, when this process runs the relay (the all-in-one
 * with Kafka): nothing the relay has not published is removed. A missing checkpoint holds everything.
 */
function relayPast(): bigint | undefined | 'none' {
  return data.relayInProcess ? relayCheckpointsPast(data.config.TESSERA_DATA_DIR, data.regionalRelay) : 'none';
}

const fileBytes = (file: string) => (existsSync(file) ? statSync(file).size : 0);

/** What the main thread's read models were past when it asked for the current run. */
let readModelsPast: bigint | undefined;

async function archiveRun(now: number, consumersPast: bigint | undefined) {
  if (store === undefined || !state.caughtUp) throw new AuditIndexBehind();
  readModelsPast = consumersPast;
  retention ??= await openLogRetention(data.config);
  archiver ??= new Archiver({
    store,
    retention,
    index,
    archiveDir,
    keysDir: join(data.config.TESSERA_DATA_DIR, 'keys'),
    settings: {
      hotWindowSeconds: data.config.TESSERA_HOT_RETENTION,
      clockSkewSeconds: data.config.TESSERA_CLOCK_SKEW,
      auditRetentionSeconds: data.config.TESSERA_AUDIT_RETENTION,
    },
    consumersPast: () => {
      const relay = relayPast();
      if (relay === undefined || readModelsPast === undefined) return undefined;
      return relay === 'none' || readModelsPast < relay ? readModelsPast : relay;
    },
    trust: archiveTrustIn(store, openWriter),
    hashes,
  });
  try {
    const result = await archiver.run(now);
    if (result.foreign.length > 0) log('warn', 'the archive folder holds files Tessera did not write: left where they are', { files: result.foreign.slice(0, 20), count: result.foreign.length, archiveDir });
    trusted.invalidate();
    // Every segment's bytes once a day; the run itself hashed every segment it had not hashed yet.
    const full = fullVerifyAt === undefined || performance.now() - fullVerifyAt > 86_400_000;
    const verification = await checkArchive({ full });
    if (full) fullVerifyAt = performance.now();
    archiveState = {
      ...archiveState,
      lastRunAt: now,
      lastRunFailure: undefined,
      hotLogBytes: retention.bytesOnDisk(),
      indexBytes: fileBytes(data.file) + fileBytes(`${data.file}-wal`),
      oldestHotEventAt: result.oldestHotEventAt,
      verifiedOk: verification.ok,
      foreign: result.foreign,
    };
    publish({ archive: archiveState });
    if (result.archived > 0 || result.deletedSegments > 0 || result.finished > 0) {
      log('info', 'archived events from the hot log', { archived: result.archived, segment: result.segment?.sequence, deletedSegments: result.deletedSegments, finished: result.finished });
    }
    return { archived: result.archived, segment: result.segment?.sequence, deletedSegments: result.deletedSegments, finished: result.finished };
  } catch (error) {
    // The archive folder full, unwritable, gone or failing its anchors: token operations go on; the hot log keeps everything until it is back.
    archiveState = { ...archiveState, lastRunFailure: error instanceof Error ? error.message : String(error) };
    if (error instanceof ArchiveUntrusted) archiveState = { ...archiveState, verifiedOk: false, verifyBreak: `${error.found.file}: ${error.found.problem}` };
    publish({ archive: archiveState });
    log('warn', 'archiving failed; the hot log keeps every event until it succeeds', { err: error instanceof Error ? error.message : String(error), archiveDir });
    throw error;
  }
}

/** One request at a time, in order: queries, and archiving runs between them. */
let queue: Promise<unknown> = Promise.resolve();
const inOrder = (task: () => Promise<void>) => {
  queue = queue.then(task, task);
};
/** A task of the thread's own, in the same order, awaited. */
function inOrderNow(task: () => Promise<void>): Promise<void> {
  const done = queue.then(task, task);
  queue = done.catch(() => undefined);
  return done;
}

port.on('message', (request: AuditRequest) => {
  if (request.kind === 'close') {
    void close().then(
      () => {
        send({ id: request.id, closed: true });
        port.close();
      },
      (error: unknown) => send({ id: request.id, error: { code: undefined, message: String(error) } }),
    );
    return;
  }
  inOrder(async () => {
    try {
      const verifiedBefore = trusted.last();
      if (request.kind === 'events') send({ id: request.id, events: await queries.events(request.query, request.budgetMs) });
      else if (request.kind === 'access-at') send({ id: request.id, accessAt: await queries.accessAt(request.accountId, request.at, request.query, request.budgetMs) });
      else send({ id: request.id, archived: await archiveRun(request.now, request.consumersPast === null ? undefined : BigInt(request.consumersPast)) });
      // A query verified the archive again (its manifest folder changed) and found it whole: the alert clears.
      const verified = trusted.last();
      if (verified !== verifiedBefore && verified?.ok === true && archiveState.verifiedOk === false) publishVerification(verified, undefined);
    } catch (error) {
      // A query that found a segment changed under it: /metrics and the alert say so too.
      if (error instanceof ArchiveUntrusted && archiveState.verifiedOk !== false) {
        log('error', 'an audit query found the archive changed: answers that reach into it are 503 until it is restored', { break: error.found, archiveDir });
        archiveState = { ...archiveState, verifiedOk: false, verifyBreak: `${error.found.file}: ${error.found.problem}` };
        publish({ archive: archiveState });
      }
      const budgetMs = error instanceof AuditQueryOverBudget ? error.budgetMs : undefined;
      const code = errorCode(error);
      send({ id: request.id, error: { code, message: error instanceof Error ? error.message : String(error), ...(budgetMs === undefined ? {} : { budgetMs }) } });
    }
  });
});
