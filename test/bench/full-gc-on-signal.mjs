// Loaded into the soak's Tessera with `node --expose-gc --import` (bench only, never in
// production): SIGUSR2 runs a full garbage collection and appends process.memoryUsage() right
// after it, as one JSON line, to the file BENCH_MEMORY_FILE names. The soak reads the heap that
// is live after a full GC there, not wherever the GC's sawtooth happened to be.
import { appendFileSync } from 'node:fs';

const file = process.env.BENCH_MEMORY_FILE;
process.on('SIGUSR2', () => {
  globalThis.gc?.();
  if (file) appendFileSync(file, `${JSON.stringify({ at: Date.now(), ...process.memoryUsage() })}\n`);
});
