import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';

/**
 * Go programs the e2e tests run, built once and kept in ~/.cache/tessera/<name>-<key> like the
 * other tools CI builds (Jaeger, LazyFS, Litestream): the key is the vendored commit, the Go
 * version and a digest of the sources built, so a new commit, a new Go or an edit of our own
 * program builds anew and nothing else does. Modules come from ~/.cache/tessera/go-modules, the
 * module cache .ci/run already keeps.
 */
const run = promisify(execFile);
const cacheRoot = join(homedir(), '.cache', 'tessera');

export interface GoBuild {
  /** The cache folder's name before its key, e.g. `i2gosignals-7d75abc2beaf`. */
  readonly name: string;
  /** The module folder `go build` runs in. */
  readonly moduleFolder: string;
  /** Folders whose files, with the module folder's, make the sources digest. */
  readonly sourceFolders: readonly string[];
  /** Package path (relative to the module) → the binary's name. */
  readonly binaries: Readonly<Record<string, string>>;
}

export interface BuiltGo {
  /** Binary name → its path in the cache. */
  readonly paths: Readonly<Record<string, string>>;
  /** Whether this call built them (cold) or found them (warm). */
  readonly built: boolean;
  readonly elapsedMs: number;
}

export async function goVersion(): Promise<string> {
  return (await run('go', ['env', 'GOVERSION'])).stdout.trim();
}

function sourcesDigest(folders: readonly string[]): string {
  const digest = createHash('sha256');
  for (const folder of folders) {
    const walk = (path: string): void => {
      for (const entry of readdirSync(path).sort()) {
        const child = join(path, entry);
        if (statSync(child).isDirectory()) walk(child);
        else digest.update(relative(folder, child)).update('\0').update(readFileSync(child)).update('\0');
      }
    };
    walk(folder);
  }
  return digest.digest('hex').slice(0, 12);
}

export async function cachedGoBuild(build: GoBuild): Promise<BuiltGo> {
  const started = performance.now();
  const folder = join(cacheRoot, `${build.name}-${await goVersion()}-${sourcesDigest([build.moduleFolder, ...build.sourceFolders])}`);
  const paths = Object.fromEntries(Object.values(build.binaries).map((binary) => [binary, join(folder, binary)]));
  if (Object.values(paths).every((path) => existsSync(path))) return { paths, built: false, elapsedMs: performance.now() - started };
  // Built into a scratch folder and renamed: a build cut short never leaves a folder that looks complete.
  const scratch = `${folder}.building-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  const env = { ...process.env, GOMODCACHE: join(cacheRoot, 'go-modules'), CGO_ENABLED: '0' };
  for (const [goPackage, binary] of Object.entries(build.binaries)) {
    await run('go', ['build', '-trimpath', '-o', join(scratch, binary), goPackage], { cwd: build.moduleFolder, env, timeout: 540_000 });
  }
  rmSync(folder, { recursive: true, force: true });
  renameSync(scratch, folder);
  return { paths, built: true, elapsedMs: performance.now() - started };
}
