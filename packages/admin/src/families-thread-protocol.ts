import type { TesseraConfig } from '@tessera/config';

/** What the families thread is started with. */
export interface FamiliesThreadData {
  /** The process's configuration: the thread opens the same store, read-only. */
  readonly config: TesseraConfig;
  /** The host's clock minus the system clock, in ms, when the thread started: the thread reads the host's time. */
  readonly clockOffsetMs: number;
}

/** Main thread → families thread. `nowMs`: the host's clock as the request left, which the thread keeps to. */
export type FamiliesRequest =
  /** The account's live families, once the model has applied the event at `position` (null: as it stands); null back if not within `timeoutMs`. */
  | { readonly id: number; readonly kind: 'live-families'; readonly accountId: string; readonly position: string | null; readonly timeoutMs: number; readonly nowMs: number }
  /** A page of the account's live families in family id order, after `after` (null: from the first), as the model stands. */
  | { readonly id: number; readonly kind: 'live-families-page'; readonly accountId: string; readonly after: string | null; readonly limit: number; readonly nowMs: number }
  | { readonly id: number; readonly kind: 'longest-token-lifetime'; readonly nowMs: number }
  | { readonly id: number; readonly kind: 'close' };

/** Families thread → main thread. */
export type FamiliesReply =
  | { readonly id: number; readonly families: readonly string[] | null }
  | { readonly id: number; readonly page: { readonly familyIds: readonly string[]; readonly more: boolean } }
  | { readonly id: number; readonly longest: number }
  | { readonly id: number; readonly closed: true }
  | { readonly id: number; readonly error: string }
  /** The model's state, sent whenever it changes. */
  | { readonly state: FamiliesThreadState }
  /** A line for the process's log. */
  | { readonly log: { readonly level: 'info' | 'warn' | 'error'; readonly message: string; readonly fields: Record<string, unknown> } };

export interface FamiliesThreadState {
  /** Caught up with the log once since the thread started. */
  readonly caughtUp: boolean;
  /** Live token families held. */
  readonly size: number;
  /** Set when the model stopped following the log for good. */
  readonly failure: string | undefined;
}
