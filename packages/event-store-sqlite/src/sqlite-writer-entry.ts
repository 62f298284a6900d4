import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { InvariantBroken } from '@tessera/contracts';

/**
 * Where the writer thread starts. Compiled, it is the writer's own JavaScript module beside this
 * one, started directly: no bootstrap, no loader, nothing between an append and its commit but the
 * message. From the TypeScript sources (the tests), a worker does not inherit its parent's loader,
 * so a bootstrap registers tsx in the thread first, as @tessera/host's workerThreadEntry does for
 * the background threads. That one cannot be used here: the host depends on this package, and it
 * also lowers the thread's priority, which the writer, on every issuance's path, must not have.
 */
export function writerThreadEntry(): { readonly url: URL; readonly execArgv: string[] } {
  const here = fileURLToPath(import.meta.url);
  if (!here.endsWith('.ts')) return { url: new URL('./sqlite-writer-worker.js', import.meta.url), execArgv: [] };
  const tsx = pathToFileURL(join(packageFolder(here, 'tsx'), 'dist', 'esm', 'api', 'index.mjs')).href;
  const writer = new URL('./sqlite-writer-worker.ts', import.meta.url).href;
  const source = `const { register } = await import(${JSON.stringify(tsx)}); register(); await import(${JSON.stringify(writer)});`;
  return { url: new URL(`data:text/javascript,${encodeURIComponent(source)}`), execArgv: ['--conditions=tessera-source'] };
}

/** node_modules/<name> in the nearest folder up from `file` that has it. */
function packageFolder(file: string, name: string): string {
  for (let folder = join(file, '..'); ; folder = join(folder, '..')) {
    const candidate = join(folder, 'node_modules', name);
    if (existsSync(candidate)) return candidate;
    if (folder === join(folder, '..')) throw new InvariantBroken(`${name} is needed to run the SQLite writer thread from the TypeScript sources`);
  }
}
