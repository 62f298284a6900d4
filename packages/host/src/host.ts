import pino, { type DestinationStream, type Logger } from 'pino';
import type { Role, TesseraConfig } from '@tessera/config';
import type { EventStore } from '@tessera/event-store';
import { openEventStore } from '@tessera/event-store-factory';
import { systemClock, systemScheduler, type Clock, type Scheduler } from '@tessera/timing';
import { ownerOnlyDataFolder } from './data-folder.js';
import { registerDataFolderGauges } from './data-folder-metrics.js';
import { loggerOptions } from './logger.js';
import { createListeners, type Listeners } from './listener-ports.js';
import { createMetrics, registerGauges, type Metrics } from './metrics.js';
import { createReadiness, type Readiness } from './readiness.js';
import { createReadModelsLifecycle, type ReadModelsLifecycle } from './read-models-phase.js';

/**
 * What a role's composition gets to wire itself into the process: its configuration, the one
 * logger, metric registry, readiness and clock, and the process's life cycle. Nothing here knows
 * HTTP: a read model, a relay or a follower runs on a Host in a worker or a CLI as well.
 */
export interface Host {
  readonly config: TesseraConfig;
  readonly role: Role;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly readiness: Readiness;
  /** The ports the listeners bound, once they have (a port variable of 0 lets the system choose). */
  readonly listeners: Listeners;
  /** The one clock: every service, projection and command reads the time from it. */
  readonly clock: Clock;
  /** The one source of behaviour timers (sweeps, retry waits, probes), beside the clock: a test moves both. */
  readonly scheduler: Scheduler;
  /**
   * The phase in which the process's read models catch up with the log: what must wait for them
   * waits here (`readModels.onCaughtUp`, `readModels.caughtUp`), wired in any order. followInto
   * with `readModels: true` feeds it.
   */
  readonly readModels: ReadModelsLifecycle;
  /** Opens the event store TESSERA_EVENT_STORE names (use `openGuardedStore`, which guards and closes it). */
  openEventStore(): Promise<EventStore>;
  /** Released when the process stops, in the reverse order of registration (what opened first closes last). */
  onClose(close: () => Promise<void>): void;
  /** A start-up step the process is not ready without. */
  untilReady(step: Promise<unknown>): void;
  /** A failure no retry fixes (a bug): logged, then the process stops for its supervisor to see. */
  fatal(error: unknown, message: string): void;
  /** Names a development-only default this process uses, for the one warning at start. */
  warnDevelopmentDefault(what: string): void;
}

export interface HostOptions {
  readonly role: Role;
  /** Default the machine's time. */
  readonly clock?: Clock;
  /** Default the machine's timers; a ManualScheduler on the ManualClock given as `clock` in tests. */
  readonly scheduler?: Scheduler;
  /** Where JSON log lines go (default stdout). Tests capture it to prove no secret is logged. */
  readonly logStream?: DestinationStream;
  /** Default: the store TESSERA_EVENT_STORE names. Tests hand in one whose subscriptions they control. */
  readonly openEventStore?: (config: TesseraConfig) => Promise<EventStore>;
  /** After a fatal failure has been logged and the process closed; default: exit with status 1. */
  readonly onFatal?: (error: unknown) => void;
}

/** A Host and the controls of the process it stands for. */
export interface HostProcess {
  readonly host: Host;
  /** Resolves once every start-up step has; rejects with the first that failed. */
  whenReady(): Promise<void>;
  /** The development-only defaults named so far, for the warning at start. */
  developmentDefaults(): readonly string[];
  /** Closes everything registered with onClose, last first; once. */
  close(): Promise<void>;
}

/**
 * Makes the kernel of one process: logger, metrics, readiness, clock and an orderly stop. It
 * listens on nothing: `@tessera/server` adds listeners, and tests inject requests instead.
 */
export function createHost(config: TesseraConfig, options: HostOptions): HostProcess {
  const log = pino({ ...loggerOptions(config.TESSERA_LOG_LEVEL), name: `tessera-${options.role}` }, options.logStream ?? process.stdout);
  const metrics = createMetrics();
  const readiness = createReadiness();
  const closers: (() => Promise<void>)[] = [];
  const pending: Promise<unknown>[] = [];
  const developmentDefaults: string[] = [];
  const clock = options.clock ?? systemClock;
  let closing: Promise<void> | undefined;

  const close = (): Promise<void> => {
    closing ??= (async () => {
      for (const closer of [...closers].reverse()) await settle(closer);
    })();
    return closing;
  };

  const host: Host = {
    config,
    role: options.role,
    log,
    metrics,
    readiness,
    listeners: createListeners(),
    clock,
    scheduler: options.scheduler ?? systemScheduler,
    readModels: createReadModelsLifecycle(),
    openEventStore: () => (options.openEventStore ? options.openEventStore(config) : openEventStore(config, { clock })),
    onClose: (closer) => void closers.push(closer),
    untilReady: (step) => {
      // Observed at once, so a step that fails before the listeners are up is not an unhandled rejection;
      // whenReady still sees the failure.
      step.catch(() => undefined);
      pending.push(step);
    },
    fatal: (error, message) => {
      log.fatal({ err: error }, `${message}; exiting so a supervisor restarts this process`);
      void close().finally(() => (options.onFatal ?? (() => process.exit(1)))(error));
    },
    warnDevelopmentDefault: (what) => void developmentDefaults.push(what),
  };

  ownerOnlyDataFolder(config.TESSERA_DATA_DIR);
  registerDataFolderGauges(metrics, config.TESSERA_DATA_DIR);
  registerGauges(metrics, {
    tessera_ready: { help: '1 while /readyz answers 200: store available, projections caught up, signing key and listeners in place', read: () => (readiness.isReady() ? 1 : 0) },
  });

  return {
    host,
    whenReady: () => Promise.all(pending).then(() => undefined),
    developmentDefaults: () => [...developmentDefaults],
    close,
  };
}

async function settle(step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch {
    // A source that fails to close must not stop the others from closing.
  }
}
