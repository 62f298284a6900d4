import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';

/**
 * The README's quickstart, run as written: the fenced `sh` blocks of its Quickstart section that
 * follow a `<!-- readme-test -->` line, pasted one after another into one bash, against a server
 * started the way `npm start` starts it (the compiled CLI) on a fresh data folder and a free port.
 * The README reads TESSERA_DATA_DIR and TESSERA_PORT with defaults, so the same text works for a
 * person on the defaults and here.
 */
const repositoryRoot = resolve(import.meta.dirname, '..', '..');
const readmePath = join(repositoryRoot, 'README.md');
const readme = readFileSync(readmePath, 'utf8');

const marker = '<!-- readme-test -->';

function quickstartSection(markdown: string): string {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('Quickstart\n'));
  if (section === undefined) throw new Error('README.md has no "## Quickstart" section');
  return section;
}

/** The marked blocks, in order. A marker not followed by a sh block is a mistake in the README. */
function markedBlocks(section: string): string[] {
  const blocks = [...section.matchAll(/<!-- readme-test -->\n```sh\n([\s\S]*?)\n```/g)].map((match) => match[1]!);
  const markers = section.split(marker).length - 1;
  if (markers !== blocks.length) throw new Error(`${markers} readme-test markers but ${blocks.length} sh blocks right after one`);
  return blocks;
}

/**
 * The answers the README shows, as `# {…}` comment lines, in order. "…" stands for any value
 * inside a JSON string; an arrow note after the object is prose.
 */
function shownAnswers(blocks: string[]): RegExp[] {
  return blocks
    .flatMap((block) => block.split('\n'))
    .filter((line) => line.startsWith('# {'))
    .map((line) => line.slice(2).replace(/\s+←.*$/, '').trim())
    .map((shown) => new RegExp(shown.split('…').map(escapeRegExp).join('[^"]*')));
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Test secrets of a throwaway server, still kept out of failure messages. */
const redact = (text: string) =>
  text.replace(/\b(tsk|tsr|tlk)_[A-Za-z0-9_.-]+/g, '$1_[redacted]').replace(/eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/g, 'eyJ[redacted]');

/**
 * Harness around the blocks, not part of them: stop at the first failing command, and have every
 * curl report its status on stderr (the README's own commands print bodies only). Between blocks
 * it waits one second, the time the README promises the server takes to follow the CLI's writes
 * and less than a person takes to read the next paragraph.
 */
const prelude = `set -eu -o pipefail
curl() { command curl --write-out '%{stderr}readme-test: %{http_code} %{method} %{url_effective}\\n' "$@"; }
`;

function runBash(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: repositoryRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolveRun({ code, stdout, stderr }));
  });
}

describe('README quickstart, run as written', () => {
  const blocks = markedBlocks(quickstartSection(readme));
  let tessera: TesseraProcess;
  let run: { code: number | null; stdout: string; stderr: string };

  beforeAll(async () => {
    tessera = await startTessera();
    run = await runBash(prelude + blocks.join('\nsleep 1\n'), tessera.env);
  }, 90_000);
  afterAll(async () => {
    await tessera?.stop();
  });

  it('has the v5 walk-through, the OAuth 2.0 and the v1 blocks marked for this test', () => {
    expect(blocks.length).toBe(7);
  });

  it('runs every marked block without a failing command', () => {
    expect(run.code, redact(run.stderr)).toBe(0);
  });

  it('gets the statuses the README describes: tokens issued, charge, refresh and revoke 200, replaced and revoked tokens 401, the OAuth 2.0 metadata, token and introspection 200, a revoked legacy key 401 but its token alive', () => {
    const statuses = [...run.stderr.matchAll(/^readme-test: (\d{3}) (\w+) https:\/\/localhost:\d+(\S*)$/gm)].map(
      ([, status, method, path]) => `${status} ${method} ${path}`,
    );
    expect(statuses).toEqual([
      '200 POST /v5/Authorization/get-oauth-token',
      '200 POST /v5/Transaction/charge',
      '200 POST /v5/Authorization/refresh-oauth-token',
      '401 POST /v5/Transaction/charge',
      '200 POST /v5/Authorization/revoke-oauth-token',
      '401 POST /v5/Transaction/charge',
      '200 GET /.well-known/oauth-authorization-server',
      '200 POST /oauth2/token',
      '200 POST /oauth2/introspect',
      '200 POST /v1/authenticate',
      '200 GET /v1/account',
      '401 POST /v1/authenticate',
      '200 POST /v1/authenticate',
      '200 GET /v1/account',
    ]);
  });

  it('prints the answers the README shows, in that order', () => {
    const patterns = shownAnswers(blocks);
    expect(patterns.length).toBeGreaterThanOrEqual(10);
    let from = 0;
    const missing: string[] = [];
    for (const pattern of patterns) {
      const found = pattern.exec(run.stdout.slice(from));
      if (found === null) missing.push(pattern.source);
      else from += found.index + found[0].length;
    }
    expect(missing, `output was:\n${redact(run.stdout)}`).toEqual([]);
  });

  it('stops as the README says: on SIGINT (Ctrl-C) the server exits 0', async () => {
    tessera.signal('SIGINT');
    expect(await tessera.exited).toBe(0);
  });
});

describe('README links', () => {
  const documents = ['README.md', 'docs/interface.md'];

  it.each(documents)('every link in %s stays inside the repository and resolves', (document) => {
    const path = join(repositoryRoot, document);
    const targets = [...readFileSync(path, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
    expect(targets.length).toBeGreaterThan(0);
    const broken = targets
      .filter((target) => !/^https?:\/\//.test(target) && !target.startsWith('#'))
      .filter((target) => {
        const resolved = resolve(dirname(path), target.split('#')[0]!);
        return relative(repositoryRoot, resolved).startsWith('..') || !existsSync(resolved);
      });
    expect(broken).toEqual([]);
  });
});
