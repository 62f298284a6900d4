import { cleanupAll } from './children.js';
import { processCpuSeconds } from './cpu-time.js';
import { load, warmUp } from './load.js';
import { detectPinning, pinBenchProcess } from './pinning.js';
import { issueTarget, startTesseraTarget } from './tessera-target.js';
const pinning = detectPinning();
pinBenchProcess(pinning, pinning.loadGeneratorCpus);
const rate = process.env.RATE ? Number(process.env.RATE) : undefined;
try {
  const tessera = await startTesseraTarget({ cpuList: pinning.serverCpus });
  const target = issueTarget(tessera);
  const options = { seconds: 10, connections: rate ? 10 : 50, ...(rate ? { overallRate: rate } : {}) };
  await warmUp(target, { ...options, seconds: 3 });
  const before = processCpuSeconds(tessera.process.pid);
  const r = await load(target, options);
  const cpu = ((processCpuSeconds(tessera.process.pid) - before) / (r.reqPerSec * r.seconds)) * 1e6;
  console.log(`${process.env.LABEL ?? ''} ${rate ?? 'full'}: ${r.reqPerSec.toFixed(0)} req/s, ${cpu.toFixed(0)} µs CPU/issuance`);
  await tessera.stop();
} finally { pinBenchProcess(pinning, pinning.allCpus); cleanupAll(); }
