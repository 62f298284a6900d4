import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

/** The packages downstream teams install, and what their package READMEs tell them to run. */
export const run = promisify(execFile);
export const repositoryRoot = resolve(import.meta.dirname, '..', '..');
const packagesFolder = join(repositoryRoot, 'packages');

export interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly private?: boolean;
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

export function manifestOf(name: string): Manifest {
  // Cast: a package.json of this repository; the fields read here are the ones npm itself requires.
  return JSON.parse(readFileSync(join(packagesFolder, name, 'package.json'), 'utf8')) as Manifest;
}

export function readmeOf(name: string): string {
  return readFileSync(join(packagesFolder, name, 'README.md'), 'utf8');
}

/** The published packages: every workspace under packages/ that is not private (`client` for @tessera/client). */
export const publicPackages = readdirSync(packagesFolder).filter((name) => manifestOf(name).private !== true);

/** Packs every public package into `folder` with `npm pack`, which builds each first, as publishing would. */
export async function packPublicPackages(folder: string): Promise<void> {
  await run('npm', ['pack', '--silent', '--pack-destination', folder, ...publicPackages.flatMap((name) => ['--workspace', `@tessera/${name}`])], {
    cwd: repositoryRoot,
  });
}

/** The Tessera packages `name` needs to run, itself included: its @tessera dependencies and peers, transitively. */
export function tesseraClosure(name: string): string[] {
  const needed = new Set<string>();
  const visit = (current: string) => {
    if (needed.has(current)) return;
    needed.add(current);
    const manifest = manifestOf(current);
    for (const dependency of [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]) {
      if (dependency.startsWith('@tessera/')) visit(dependency.slice('@tessera/'.length));
    }
  };
  visit(name);
  return [...needed];
}

/** The peers, other than Tessera's own and optional ones, that the packages of a closure leave to the installer. */
export function requiredPeers(closure: readonly string[]): string[] {
  const peers = new Set<string>();
  for (const name of closure) {
    const manifest = manifestOf(name);
    for (const peer of Object.keys(manifest.peerDependencies ?? {})) {
      if (!peer.startsWith('@tessera/') && manifest.peerDependenciesMeta?.[peer]?.optional !== true) peers.add(peer);
    }
  }
  return [...peers];
}

/** The fenced block that follows `<!-- marker -->` in a README, without its fences. */
export function markedBlock(readme: string, marker: string): string {
  const match = new RegExp(`<!-- ${marker} -->\\n\`\`\`[a-z]*\\n([\\s\\S]*?)\`\`\``).exec(readme);
  if (!match) throw new Error(`the README has no fenced block after <!-- ${marker} -->`);
  return match[1]!;
}

/** The tarballs an install command names, as `./vendor/tessera-<name>-<version>.tgz`. */
export function tarballsNamed(command: string): { name: string; version: string }[] {
  return [...command.matchAll(/\.\/vendor\/tessera-([a-z]+(?:-[a-z]+)*)-(\d+\.\d+\.\d+[^\s/]*)\.tgz/g)].map(([, name, version]) => ({ name: name!, version: version! }));
}
