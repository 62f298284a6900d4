export { ManualClock, epochSeconds, systemClock, type Clock } from './clock.js';
export { Retry, sleep, type BackoffPolicy, type RetryLogger, type RetryLogging, type RetryOptions, type RetryOutcome, type RunOptions } from './retry.js';
export { InvalidTimingArgument } from './invalid-timing-argument.js';
export { systemScheduler, type Cancel, type Scheduler } from './scheduler.js';
export { ManualScheduler } from './manual-scheduler.js';
