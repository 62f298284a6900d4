/**
 * Child process (node --expose-gc --import tsx): the revocation projection's memory and
 * rebuild time. Prints one JSON line with the results.
 *
 * 1. In memory: apply N TokenRotated events with distinct 22-char base64url family ids to an
 *    empty RevocationProjection; time the apply() calls only (events are made in chunks
 *    outside the clock); heap bytes per live entry = heapUsed growth after full GCs / size.
 * 2. From a real log: append the same N events, one family stream each, into a temp
 *    SqliteEventStore in batches (setup, timed separately), close it, open it again as a
 *    starting verifier would, and time subscribeToAll(TokenRotated, TokenRevoked) → apply
 *    until caughtUp.
 *
 * env: BENCH_PROJECTION_ENTRIES (default 1000000).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TokenRotated } from '@tessera/contracts';
import { SqliteEventStore } from '@tessera/event-store-sqlite';
import { RevocationProjection, type RevocationEvent } from '@tessera/verification';

const entries = Number(process.env.BENCH_PROJECTION_ENTRIES ?? 1_000_000);
const chunkSize = 10_000;
const appendBatch = 5_000;
const collect = globalThis.gc;
if (!collect) throw new Error('run with --expose-gc');

function heapAfterGc(): number {
  // Twice: the first pass can leave finalisable garbage for the second.
  collect?.();
  collect?.();
  return process.memoryUsage().heapUsed;
}

function log(message: string): void {
  process.stderr.write(`[projection ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

const now = Math.floor(Date.now() / 1000);
const hash = randomBytes(32).toString('base64url');

/** A chunk of distinct TokenRotated events; the ids come from fresh random bytes. */
function makeChunk(size: number): TokenRotated[] {
  const bytes = randomBytes(16 * size);
  const events: TokenRotated[] = [];
  for (let i = 0; i < size; i += 1) {
    events.push({
      type: 'TokenRotated',
      v: 1,
      familyId: bytes.toString('base64url', i * 16, i * 16 + 16),
      accountId: 'acc_bench',
      credentialId: 'cred_bench',
      apiLoginId: 'tsl_bench',
      generation: 1,
      refreshTokenHash: hash,
      jti: `jti_${i}`,
      scope: ['transaction:charge'],
      issuedAt: now,
      accessExpiresAt: now + 3600,
      refreshExpiresAt: now + 604_800,
    });
  }
  return events;
}

function memoryPhase() {
  const before = heapAfterGc();
  const projection = new RevocationProjection();
  let applyNs = 0n;
  for (let done = 0; done < entries; done += chunkSize) {
    const chunk = makeChunk(Math.min(chunkSize, entries - done));
    const start = process.hrtime.bigint();
    for (const event of chunk) projection.apply(event);
    applyNs += process.hrtime.bigint() - start;
  }
  const after = heapAfterGc();
  if (projection.size !== entries) throw new Error(`expected ${entries} entries, found ${projection.size}`);
  const result = {
    entries: projection.size,
    heapBytes: after - before,
    bytesPerEntry: (after - before) / projection.size,
    applySeconds: Number(applyNs) / 1e9,
    rssBytes: process.memoryUsage().rss,
  };
  log(`in memory: ${result.entries} entries, ${result.bytesPerEntry.toFixed(1)} heap bytes each, applied in ${result.applySeconds.toFixed(3)} s`);
  return result;
}

async function sqlitePhase() {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-bench-projection-'));
  try {
    const file = join(dir, 'events.db');
    const writer = new SqliteEventStore({ file });
    const appendStart = process.hrtime.bigint();
    for (let done = 0; done < entries; done += appendBatch) {
      // One tick's appends share one transaction and one fsync (group commit).
      const chunk = makeChunk(Math.min(appendBatch, entries - done));
      await Promise.all(chunk.map((event) => writer.append(`tokenfamily-${event.familyId}`, [{ event }], { expectedRevision: 'no_stream' })));
      if ((done / appendBatch) % 40 === 0) log(`appended ${done + chunk.length} / ${entries}`);
    }
    const appendSeconds = Number(process.hrtime.bigint() - appendStart) / 1e9;
    await writer.close();
    const fileBytes = statSync(file).size;
    log(`appended ${entries} events in ${appendSeconds.toFixed(1)} s (setup); log is ${(fileBytes / 1e6).toFixed(0)} MB`);

    const before = heapAfterGc();
    const rebuildStart = process.hrtime.bigint();
    // What a starting verifier does: open the log, subscribe from the start, wait for caughtUp.
    const reader = new SqliteEventStore({ file });
    const projection = new RevocationProjection();
    const subscription = reader.subscribeToAll({
      types: ['TokenRotated', 'TokenRevoked'],
      onEvent: ({ event }) => projection.apply(event as RevocationEvent),
    });
    await subscription.caughtUp;
    const rebuildSeconds = Number(process.hrtime.bigint() - rebuildStart) / 1e9;
    await subscription.close();
    await reader.close();
    const after = heapAfterGc();
    if (projection.size !== entries) throw new Error(`rebuilt ${projection.size} entries, expected ${entries}`);
    const result = {
      entries: projection.size,
      appendSeconds,
      appendEventsPerSecond: entries / appendSeconds,
      logFileBytes: fileBytes,
      rebuildSeconds,
      bytesPerEntry: (after - before) / projection.size,
    };
    log(`from SQLite: ${result.entries} entries rebuilt in ${rebuildSeconds.toFixed(2)} s, ${result.bytesPerEntry.toFixed(1)} heap bytes each`);
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const memory = memoryPhase();
const sqlite = await sqlitePhase();
process.stdout.write(`${JSON.stringify({ memory, sqlite })}\n`);
