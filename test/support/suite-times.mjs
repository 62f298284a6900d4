// Prints the suite's time by tier and its slowest files, from vitest JSON reports (CI calls it
// after the test steps): the figures a change to the tests quotes before and after.
// Usage: node test/support/suite-times.mjs REPORT.json [REPORT.json ...]
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const tierOf = (file) =>
  file.endsWith('.perf.test.ts') ? 'perf' : file.endsWith('.unit.test.ts') || /\/test\/(compose|architecture)\//.test(file) ? 'unit' : file.endsWith('.int.test.ts') ? 'integration' : 'e2e';

const files = process.argv.slice(2).flatMap((report) => JSON.parse(readFileSync(report, 'utf8')).testResults);
const tiers = new Map();
for (const file of files) {
  const tier = tiersEntry(tierOf(file.name));
  tier.files += 1;
  tier.tests += file.assertionResults.length;
  tier.ms += Math.max(0, file.endTime - file.startTime);
}
function tiersEntry(name) {
  if (!tiers.has(name)) tiers.set(name, { files: 0, tests: 0, ms: 0 });
  return tiers.get(name);
}
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
for (const name of ['unit', 'integration', 'e2e', 'perf']) {
  const tier = tiers.get(name);
  if (tier) console.log(`suite time: ${name} ${tier.files} files, ${tier.tests} tests, ${seconds(tier.ms)} of file time`);
}
const slowest = [...files].sort((a, b) => b.endTime - b.startTime - (a.endTime - a.startTime)).slice(0, 8);
for (const file of slowest) console.log(`slowest: ${seconds(file.endTime - file.startTime)} ${relative(process.cwd(), file.name)}`);
