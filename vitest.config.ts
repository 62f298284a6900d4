import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Tests import the workspace packages' TypeScript sources (the `tessera-source` export condition),
// so a change is tested without a build; processes the tests spawn run the compiled dist/.
// Without `module`, which Node does not know: Vite would pick that export of @opentelemetry/api, an
// ESM build with extensionless imports that Node cannot load (the workers resolve natively with the
// same conditions).
const conditions = ['tessera-source', ...defaultServerConditions.filter((condition) => condition !== 'module')];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    // Two cores: e2e suites start real servers, so files run with limited parallelism.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll waits for something asynchronous to happen, and ends as soon as it has: a long
    // bound costs a passing test nothing and spares a busy machine a false failure.
    expect: { poll: { timeout: 5_000 } },
    globalSetup: ['test/support/kafka-global-setup.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['packages/**/src/**/*.unit.test.ts', 'services/**/src/**/*.unit.test.ts', 'test/compose/**/*.test.ts', 'test/architecture/**/*.test.ts', 'test/sim/**/*.unit.test.ts'] },
      },
      {
        extends: true,
        // infra/: the real parts' own tests (MirrorMaker 2 and Toxiproxy between two brokers they start themselves).
        test: { name: 'integration', include: ['packages/**/src/**/*.int.test.ts', 'services/**/src/**/*.int.test.ts', 'infra/**/*.int.test.ts'] },
      },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts', 'test/downstream/**/*.test.ts'], fileParallelism: false },
      },
      {
        extends: true,
        // Heap budgets and the benchmarks' own tooling (paced load against a local server): they
        // measure this machine, so they run alone, one file at a time, and not in `npm test`
        // (its script leaves this project out); CI runs them in a step of their own.
        test: { name: 'perf', include: ['packages/**/src/**/*.perf.test.ts', 'services/**/src/**/*.perf.test.ts', 'test/bench/**/*.perf.test.ts'], fileParallelism: false },
      },
    ],
  },
});
