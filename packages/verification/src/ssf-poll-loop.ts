import { pause } from './ssf-backoff.js';
import type { SetErrorCode, SetOutcome } from './ssf-set-verification.js';
import { TransmitterRefused, type TransmitterClient } from './ssf-transmitter.js';

export interface PollLoopOptions {
  readonly transmitter: TransmitterClient;
  readonly pollUrl: string;
  readonly maxEvents: number;
  readonly handleSet: (token: string) => Promise<SetOutcome>;
  /** Whether the verification SET has come: only a catch-up after it counts. */
  readonly isVerified: () => boolean;
  readonly signal: AbortSignal;
  readonly reportError: (error: unknown) => void;
}

export interface PollLoop {
  /** The first poll answered `moreAvailable: false` after the stream was verified. */
  readonly caughtUp: Promise<void>;
  /** The loop has stopped (the signal aborted). */
  readonly finished: Promise<void>;
}

/**
 * RFC 8936 long polling: each request acknowledges the SETs the previous answer brought that were
 * applied (and persisted), and reports `setErrs` for those refused, so an acknowledgment never
 * precedes what it acknowledges. `returnImmediately: false` lets the transmitter hold the request
 * until something happens. A failed poll backs off (250 ms doubling to 30 s), so a transmitter that
 * is down sees no hot loop, and one refused with Retry-After (a 429, a 503) waits at least that long;
 * the acknowledgments it did not get are sent with the next poll.
 */
export function runPollLoop(options: PollLoopOptions): PollLoop {
  let onCaughtUp: () => void = () => undefined;
  const caughtUp = new Promise<void>((resolveCaughtUp) => (onCaughtUp = resolveCaughtUp));
  const finished = loop();

  async function loop(): Promise<void> {
    let ack: string[] = [];
    let setErrs: Record<string, { err: SetErrorCode; description: string }> = {};
    let pauseMs = 250;
    while (!options.signal.aborted) {
      let answer;
      try {
        answer = await options.transmitter.poll(options.pollUrl, { maxEvents: options.maxEvents, returnImmediately: false, ack, setErrs }, options.signal);
      } catch (error) {
        if (options.signal.aborted) return;
        options.reportError(error);
        // A refusal that says when to ask again (a 429 or 503 with Retry-After) is asked again then, not sooner.
        const retryAfterMs = error instanceof TransmitterRefused ? error.retryAfterMs : undefined;
        await pause(Math.max(pauseMs, retryAfterMs ?? 0), options.signal);
        if (retryAfterMs === undefined) pauseMs = Math.min(pauseMs * 2, 30_000);
        continue;
      }
      pauseMs = 250;
      ack = [];
      setErrs = {};
      let failed = false;
      for (const [jti, token] of Object.entries(answer.sets)) {
        let outcome: SetOutcome;
        try {
          outcome = await options.handleSet(token);
        } catch (error) {
          // Not applied or not persisted (a disk error): neither acknowledged nor refused, so it comes again.
          options.reportError(error);
          failed = true;
          continue;
        }
        if (outcome.applied) ack.push(jti);
        else {
          setErrs[jti] = { err: outcome.err, description: outcome.description };
          // Tessera keeps a SET refused with any code but invalid_request (and, shortly after a key rotation, even that) and answers it again.
          failed = true;
        }
      }
      if (!answer.moreAvailable && options.isVerified()) onCaughtUp();
      // The SETs not applied come back at once: backing off keeps a failing disk, or a SET this receiver refuses, from a hot loop.
      if (failed) {
        await pause(pauseMs, options.signal);
        pauseMs = Math.min(pauseMs * 2, 30_000);
      }
    }
  }

  return { caughtUp, finished };
}
