import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Extractor, ExtractorConfig, ExtractorLogLevel, type IConfigFile } from '@microsoft/api-extractor';

/**
 * The API report of each published package: what its compiled declarations (dist/index.d.ts)
 * export, as API Extractor writes it, in packages/<name>/api/<name>.api.md. `npm run api:report`
 * rewrites the reports; `npm run api:check` fails when one no longer matches the code, so a change
 * to what downstream teams install shows in review as a diff of its report. Both read dist/: build first.
 */
const repositoryRoot = resolve(import.meta.dirname, '..', '..');
const packagesFolder = join(repositoryRoot, 'packages');

interface Manifest {
  readonly name: string;
  readonly private?: boolean;
}

/** The published packages, as the layering rules and the release name them: every package not private. */
function publishedPackages(): string[] {
  return readdirSync(packagesFolder).filter((name) => {
    // Cast: a package.json of this repository; `private` is the one field read here.
    const manifest = JSON.parse(readFileSync(join(packagesFolder, name, 'package.json'), 'utf8')) as Manifest;
    return manifest.private !== true;
  });
}

function configOf(folder: string, scratch: string): IConfigFile {
  return {
    projectFolder: folder,
    mainEntryPointFilePath: '<projectFolder>/dist/index.d.ts',
    compiler: { tsconfigFilePath: '<projectFolder>/tsconfig.json' },
    apiReport: { enabled: true, reportFolder: '<projectFolder>/api/', reportTempFolder: scratch, reportFileName: '<unscopedPackageName>', includeForgottenExports: false },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
      extractorMessageReporting: {
        default: { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: true },
        // The packages use no release tags (@public, @beta): everything exported is public.
        'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
        // A missing doc comment is for review, not a change of API: it would bury the changes in the report.
        'ae-undocumented': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
      },
      // TSDoc's own syntax checks are about doc comments, not about the API: left to review.
      tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None, addToApiReportFile: false } },
    },
  };
}

/** Runs API Extractor on every published package; true when every report matches (check) or was written (write). */
export function apiReports(mode: 'write' | 'check'): boolean {
  const scratch = mkdtempSync(join(tmpdir(), 'tessera-api-report-'));
  let matching = true;
  try {
    for (const name of publishedPackages()) {
      const folder = join(packagesFolder, name);
      // API Extractor writes into the report folder but does not make it: a new package has none yet.
      if (mode === 'write') mkdirSync(join(folder, 'api'), { recursive: true });
      const config = ExtractorConfig.prepare({
        configObject: configOf(folder, scratch),
        configObjectFullPath: join(folder, 'api-extractor.json'),
        packageJsonFullPath: join(folder, 'package.json'),
      });
      const result = Extractor.invoke(config, {
        localBuild: mode === 'write',
        messageCallback: (message) => {
          // Its per-package chatter ("Analysis will use the bundled TypeScript version …") is not news.
          if (message.logLevel === ExtractorLogLevel.Info || message.logLevel === ExtractorLogLevel.Verbose) message.handled = true;
        },
      });
      const reportFile = `packages/${name}/api/${name}.api.md`;
      if (mode === 'check' && result.apiReportChanged) {
        console.error(`${reportFile} does not match the code: run \`npm run build && npm run api:report\` and commit it (CONTRIBUTING.md, "API reports")`);
        matching = false;
      } else if (!result.succeeded) {
        console.error(`API Extractor failed on @tessera/${name}: ${result.errorCount} errors`);
        matching = false;
      } else {
        console.log(`${reportFile}: ${mode === 'write' ? (result.apiReportChanged ? 'written' : 'unchanged') : 'matches the code'}`);
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return matching;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  process.exitCode = apiReports(process.argv.includes('--write') ? 'write' : 'check') ? 0 : 1;
}
