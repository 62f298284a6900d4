import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';

/**
 * /metrics as Prometheus tooling reads it: every family has HELP and TYPE, a counter's name ends
 * in `_total` and nothing else's does (promtool check metrics, which also runs here when it is
 * on PATH), and every sample line parses.
 */
let tessera: TesseraProcess;
beforeAll(async () => {
  tessera = await startTessera();
  const account = await tessera.createAccount();
  await tessera.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: 'tsk_wrong' });
});
afterAll(async () => {
  await tessera?.stop();
});

describe('/metrics on the admin listener', () => {
  it('follows Prometheus naming: counters end in _total, gauges and histograms do not; every family has HELP and TYPE', async () => {
    const answer = await tessera.adminRequest('/metrics');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const types = new Map<string, string>();
    const helps = new Set<string>();
    for (const line of answer.text.split('\n')) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type) types.set(type[1]!, type[2]!);
      const help = /^# HELP (\S+) /.exec(line);
      if (help) helps.add(help[1]!);
      if (line && !line.startsWith('#')) expect(line).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [-+0-9.eEInfNa]+( \d+)?$/);
    }
    expect(types.size).toBeGreaterThan(10);
    for (const [name, type] of types) {
      expect(helps.has(name), `HELP for ${name}`).toBe(true);
      if (type === 'counter') expect(name, `${name} is a counter`).toMatch(/_total$/);
      else expect(name, `${name} is a ${type}`).not.toMatch(/_total$/);
    }
    expect(types.get('tessera_tokens_total')).toBe('counter');
  });

  it('passes promtool check metrics, where promtool is installed', async (context) => {
    const found = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
    if (found.error) {
      console.warn('\n!!! promtool is not on PATH: `promtool check metrics` SKIPPED (the naming test above still ran).\n');
      context.skip();
    }
    const answer = await tessera.adminRequest('/metrics');
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: answer.text, encoding: 'utf8' });
    expect(checked.stdout + checked.stderr).toBe('');
    expect(checked.status).toBe(0);
  });
});
