/**
 * The messages between the store (sqlite-event-store.ts) and its writer thread
 * (sqlite-writer-worker.ts), declared once and imported by both as types: nothing here exists at
 * run time, so the thread loads no more than it did. Every bigint travels as a decimal string
 * (a structured clone would take a bigint, but the revision and position are read as text by
 * BigInt() on the other side either way).
 */

/** What the thread opens: the log file, and the page cache the store gives every connection. */
export interface WriterData {
  readonly file: string;
  readonly cacheKiB: number;
}

/** One event as the thread inserts it. */
export type WriterRow = readonly [eventId: string, type: string, payloadJson: string, metadataJson: string];

/** One append of a batch: `expected` is `no_stream`, `any` or a revision in decimal. */
export interface WriterAppend {
  readonly stream: string;
  readonly expected: string;
  readonly recordedAt: number;
  readonly rows: readonly WriterRow[];
}

export type WriterRequest =
  /** A batch: every append in it is committed together, or none is. */
  | { readonly id: number; readonly appends: readonly WriterAppend[]; readonly probe?: undefined }
  /** One durable write outside the log (the store_probe row): is the store writable? */
  | { readonly id: number; readonly probe: true; readonly appends?: undefined };

/** One append's outcome; a conflict or a failure leaves the rest of its batch alone. */
export type WriterResult =
  | { readonly ok: { readonly revision: string; readonly position: string } }
  | { readonly conflict: { readonly actual: string } }
  | { readonly failed: { readonly code: string; readonly message: string } };

export type WriterReply =
  /** `commitMs`: the thread's time from BEGIN to COMMIT returned (the fsync included), for /metrics. */
  | { readonly id: number; readonly results: readonly WriterResult[]; readonly commitMs: number }
  /** Nothing of the batch was written (BEGIN or COMMIT failed, or an error ended the transaction). */
  | { readonly id: number; readonly unavailable: string };

export type ProbeReply = { readonly id: number; readonly probed: true } | { readonly id: number; readonly unavailable: string };
