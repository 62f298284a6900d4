// Loaded into the soak's Tessera with `node --expose-gc --import` (bench only, never in
// production): SIGUSR2 runs a full garbage collection, so the soak reads the heap that is live
// after it rather than wherever the GC's sawtooth happened to be.
process.on('SIGUSR2', () => globalThis.gc?.());
