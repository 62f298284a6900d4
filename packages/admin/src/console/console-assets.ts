import { readFile } from 'node:fs/promises';
/**
 * The console's files, from the package: the page and its style as written (console/static/), its
 * script as tsc compiled it (console/dist/, from console/src/). The same relative path from this
 * module's source (src/console/) and its compiled copy (dist/console/).
 */
const consoleFolder = new URL('../../console/', import.meta.url);
const staticFolder = new URL('static/', consoleFolder);
const scriptFolder = new URL('dist/', consoleFolder);

export interface ConsoleAsset {
  readonly contentType: string;
  readonly body: Buffer;
}

const read = new Map<string, Promise<ConsoleAsset | undefined>>();

/** The page itself; undefined when the script it loads has not been compiled (`npm run build`). */
export async function consolePage(): Promise<Buffer | undefined> {
  if ((await consoleAsset('console.js')) === undefined) return undefined;
  return (await consoleAsset('index.html', staticFolder))?.body;
}

/**
 * A file of the console by name (the route's pattern admits only lower-case names ending in .js
 * or .css, so no path leaves the folders), read once and kept (once found): they change only with the package.
 */
export function consoleAsset(file: string, folder?: URL): Promise<ConsoleAsset | undefined> {
  const from = folder ?? (file.endsWith('.js') ? scriptFolder : staticFolder);
  const key = new URL(file, from).href;
  let found = read.get(key);
  if (!found) {
    found = readFile(new URL(file, from)).then(
      (body) => ({ contentType: contentTypeOf(file), body }),
      () => {
        // Not kept: a build after the start serves it on the next request.
        read.delete(key);
        return undefined;
      },
    );
    read.set(key, found);
  }
  return found;
}

function contentTypeOf(file: string): string {
  if (file.endsWith('.js')) return 'text/javascript; charset=utf-8';
  if (file.endsWith('.css')) return 'text/css; charset=utf-8';
  return 'text/html; charset=utf-8';
}
