/**
 * The admin API's families read model on a thread of its own: it follows the log's token events
 * through a read-only store of its own, at the lowest CPU priority, so that reading a long history
 * on the first account revocation costs token requests nothing on a shared core. Started by
 * families-thread.ts; speaks families-thread-protocol.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { followLog, guardAvailability } from '@tessera/event-store';
import { openEventStore } from '@tessera/event-store-factory';
// The subpath: the kernel's index would load its logger and metrics into this thread for nothing.
import { currentBackgroundThread } from '@tessera/host/background-thread';
import { epochSeconds, systemClock, type Clock } from '@tessera/timing';
import { AccountFamilies } from './account-families.js';
import type { FamiliesReply, FamiliesRequest, FamiliesThreadData, FamiliesThreadState } from './families-thread-protocol.js';
import { InvariantBroken } from '@tessera/contracts';

const port = parentPort;
if (port === null) throw new InvariantBroken('families-thread-worker.ts runs as a worker thread');
// Cast: the data families-thread.ts hands this thread, in the shape it declares.
const data = workerData as FamiliesThreadData;
const send = (reply: FamiliesReply) => port.postMessage(reply);
const log = (level: 'info' | 'warn' | 'error', message: string, fields: Record<string, unknown> = {}) => send({ log: { level, message, fields } });

// Lowered by the thread's bootstrap (workerThreadEntry) before this module loaded.
const backgroundThread = currentBackgroundThread();

/** The host's clock: the system clock moved by what the main thread last said its time was. */
let offsetMs = data.clockOffsetMs;
const clock: Clock = { now: () => systemClock.now() + offsetMs };
const keepTo = (nowMs: number) => {
  offsetMs = nowMs - systemClock.now();
};

const families = new AccountFamilies(() => epochSeconds(clock));
let state: FamiliesThreadState = { caughtUp: false, size: 0, failure: undefined };
const publish = (next: Partial<FamiliesThreadState>) => {
  state = { ...state, ...next };
  send({ state });
};
const fail = (error: unknown) => {
  const failure = error instanceof Error ? error.message : String(error);
  log('error', 'the admin families read model stopped following the log; account revocations answer 503 until the process restarts', { err: failure });
  publish({ failure });
};

const started = performance.now();
const store = guardAvailability(await openEventStore(data.config, { readOnly: true }), {
  onChange: (availability) => {
    if (!availability.available) log('warn', 'the admin families read model lost the event store; it follows again once it is back', { cause: availability.cause });
  },
});
const following = followLog(store, [families], fail);
following.caughtUp.then(
  () => {
    publish({ caughtUp: true, size: families.size });
    log('info', 'the admin families read model caught up with the event log', { families: families.size, seconds: (performance.now() - started) / 1000, background_thread: backgroundThread ?? null });
  },
  () => undefined,
);
// Families whose tokens have all expired leave once a minute; the size is sent when it moved.
const forget = setInterval(() => families.forgetExpired(epochSeconds(clock)), 60_000);
const sizes = setInterval(() => {
  if (families.size !== state.size) publish({ size: families.size });
}, 1_000);

async function answer(request: Exclude<FamiliesRequest, { kind: 'close' }>): Promise<FamiliesReply> {
  keepTo(request.nowMs);
  if (request.kind === 'longest-token-lifetime') return { id: request.id, longest: families.longestTokenLifetime };
  if (request.kind === 'live-families-page') return { id: request.id, page: families.liveFamiliesPage(request.accountId, epochSeconds(clock), request.after ?? undefined, request.limit) };
  const reached = request.position === null || (await families.reached(BigInt(request.position), request.timeoutMs));
  return { id: request.id, families: reached ? families.liveFamilies(request.accountId, epochSeconds(clock)) : null };
}

port.on('message', (request: FamiliesRequest) => {
  if (request.kind === 'close') {
    clearInterval(forget);
    clearInterval(sizes);
    void following
      .close()
      .then(() => store.close())
      .then(
        () => {
          send({ id: request.id, closed: true });
          port.close();
        },
        (error: unknown) => send({ id: request.id, error: String(error) }),
      );
    return;
  }
  answer(request).then(send, (error: unknown) => send({ id: request.id, error: error instanceof Error ? error.message : String(error) }));
});
