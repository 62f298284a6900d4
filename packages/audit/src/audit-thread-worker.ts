/**
 * The audit index's own thread: it follows the log (through a read-only store of its own), writes
 * the index, and answers the audit queries, so none of that runs on the thread that answers token
 * requests. Started by audit-thread.ts; speaks audit-thread-protocol.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EventStoreUnavailable, guardAvailability, type GuardedEventStore } from '@tessera/event-store';
import { openEventStore } from '@tessera/event-store-factory';
import { AuditIndex, AuditQueryOverBudget } from './audit-index.js';
import type { AuditReply, AuditRequest, AuditThreadData, AuditThreadState } from './audit-thread-protocol.js';
import { followIntoIndex, type IndexFollower } from './index-follower.js';
import { runInBackground } from './thread-priority.js';

const port = parentPort;
if (port === null) throw new Error('audit-thread-worker.ts runs as a worker thread');
// Cast: the data audit-thread.ts hands this thread, in the shape it declares.
const data = workerData as AuditThreadData;
const send = (reply: AuditReply) => port.postMessage(reply);
const log = (level: 'info' | 'warn' | 'error', message: string, fields: Record<string, unknown> = {}) => send({ log: { level, message, fields } });

// Audit work takes the CPU token requests leave: on a shared core, an index catching up or a long
// query must not stretch a get-oauth-token's latency.
const backgroundThread = runInBackground();

const index = AuditIndex.open(data.file);
if (index.rebuilt) log('warn', 'the audit index was unreadable or of another version: rebuilding it from the event log', { file: data.file });
let state: AuditThreadState = { position: index.position(), caughtUp: false, failure: undefined };
const publish = (next: Partial<AuditThreadState>) => {
  state = { ...state, ...next };
  send({ state });
};
publish({});

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
  publish({ caughtUp: true, position: index.position() });
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
  await store?.close();
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
  try {
    if (request.kind === 'events') send({ id: request.id, events: index.events(request.query, request.budgetMs) });
    else send({ id: request.id, accessAt: index.accessAt(request.accountId, request.at, request.query, request.budgetMs) });
  } catch (error) {
    const budgetMs = error instanceof AuditQueryOverBudget ? error.budgetMs : undefined;
    const code = error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
    send({ id: request.id, error: { code, message: error instanceof Error ? error.message : String(error), ...(budgetMs === undefined ? {} : { budgetMs }) } });
  }
});
