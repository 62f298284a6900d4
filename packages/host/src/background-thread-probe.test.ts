// Not a test file of its own: the entry a background-thread test loads through workerThreadEntry's
// bootstrap. At its first line it reports the thread's nice and scheduling policy as it found them,
// so the test sees whether the bootstrap lowered the thread before this module loaded.
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

const stat = readFileSync('/proc/thread-self/stat', 'utf8');
const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
parentPort?.postMessage({ nice: Number(fields[16]), policy: Number(fields[38]) });
