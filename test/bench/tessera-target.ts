import { join } from 'node:path';
import type autocannon from 'autocannon';
import { startTessera, type Credentials, type TesseraProcess } from '../support/tessera-process.js';
import { onCleanup } from './children.js';
import { issueAmount, type LoadTarget } from './load.js';
import type { RefreshPool } from './refresh-pool.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';

/**
 * The real all-in-one server (`tessera start`: issuer + verifier, durable SQLite with group
 * commit, HTTPS) started by the e2e harness in a temp data folder, plus the bench's requests.
 */
export interface TesseraTarget {
  readonly process: TesseraProcess;
  /** https://127.0.0.1:port: the bench talks to the IPv4 loopback only. */
  readonly origin: string;
  readonly credentials: Credentials;
  readonly tlsFiles: { readonly cert: string; readonly key: string };
  readonly logLevel: string;
  stop(): Promise<void>;
}

/** `command`: `start` (the all-in-one, default) or `issuer` (the split topology's issuer alone). */
export async function startTesseraTarget(options: { cpuList?: string; nodeArgs?: string[]; env?: Record<string, string>; command?: 'start' | 'issuer' } = {}): Promise<TesseraTarget> {
  // Tessera's default level: every token operation writes its access line, as in production.
  // The lines go to a file in the data folder, not through a pipe into this process's heap,
  // so logging costs the server and not the load generator.
  const logLevel = process.env.BENCH_TESSERA_LOG_LEVEL ?? 'info';
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-bench-'));
  const tessera = await startTessera(
    { TESSERA_LOG_LEVEL: logLevel, ...options.env },
    {
      dataDir,
      logFile: join(dataDir, 'tessera.log'),
      ...(options.cpuList !== undefined ? { cpuList: options.cpuList } : {}),
      ...(options.nodeArgs ? { nodeArgs: options.nodeArgs } : {}),
      ...(options.command ? { command: options.command } : {}),
    },
  );
  const forget = onCleanup(() => {
    tessera.signal('SIGKILL');
    rmSync(tessera.dataDir, { recursive: true, force: true });
  });
  const credentials = await tessera.createAccount({ permissions: ['transaction:charge'], name: 'bench shop' });
  const port = new URL(tessera.baseUrl).port;
  return {
    process: tessera,
    origin: `https://127.0.0.1:${port}`,
    credentials,
    tlsFiles: { cert: join(tessera.dataDir, 'tls', 'self-signed.crt'), key: join(tessera.dataDir, 'tls', 'self-signed.key') },
    logLevel,
    async stop() {
      await tessera.stop();
      forget();
    },
  };
}

const json = { 'content-type': 'application/json' };

export function issueTarget(target: TesseraTarget, onResponse?: (status: number, body: string) => void): LoadTarget {
  return {
    url: `${target.origin}/v5/Authorization/get-oauth-token`,
    headers: json,
    body: JSON.stringify({ api_login_id: target.credentials.api_login_id, transaction_key: target.credentials.transaction_key }),
    ...(onResponse ? { onResponse } : {}),
  };
}

export function refreshTarget(target: TesseraTarget, pool: RefreshPool): LoadTarget {
  return {
    url: `${target.origin}/v5/Authorization/refresh-oauth-token`,
    headers: json,
    setupRequest: (request: autocannon.Request) => ({ ...request, body: JSON.stringify({ refresh_token: pool.next() }) }),
    onResponse: (status, body) => {
      if (status === 200) pool.keep((JSON.parse(body) as { refresh_token: string }).refresh_token);
    },
  };
}

/** A fresh pair's access token (its family never rotated), from one get-oauth-token outside any measurement. */
export async function freshAccessToken(target: TesseraTarget): Promise<string> {
  const answer = await target.process.postJson('/v5/Authorization/get-oauth-token', {
    api_login_id: target.credentials.api_login_id,
    transaction_key: target.credentials.transaction_key,
  });
  if (answer.status !== 200) throw new Error(`get-oauth-token answered ${answer.status}`);
  return String(answer.json().token);
}

/** Issues `amount` pairs as fast as the server answers (setup, not measured) and returns their single-use refresh tokens. */
export async function preIssueRefreshTokens(target: TesseraTarget, options: { amount: number; connections: number }): Promise<string[]> {
  const tokens: string[] = [];
  await issueAmount(
    issueTarget(target, (status, body) => {
      if (status === 200) tokens.push((JSON.parse(body) as { refresh_token: string }).refresh_token);
    }),
    options,
  );
  return tokens;
}

export function chargeTarget(target: TesseraTarget, accessToken: string): LoadTarget {
  return {
    url: `${target.origin}/v5/Transaction/charge`,
    headers: { ...json, authorization: `Bearer ${accessToken}` },
    body: '{}',
  };
}

/** The SQLite writer thread's totals from the admin /metrics (tessera_event_store_commit*). */
export interface WriterTotals {
  readonly commits: number;
  readonly appends: number;
  readonly commitSeconds: number;
  readonly roundTripSeconds: number;
}

export async function writerTotals(target: TesseraTarget): Promise<WriterTotals> {
  const metrics = await target.process.adminRequest('/metrics');
  if (metrics.status !== 200) throw new Error(`/metrics answered ${metrics.status}`);
  const value = (name: string) => {
    const line = metrics.text.split('\n').find((l) => l.startsWith(`${name} `));
    if (!line) throw new Error(`/metrics has no ${name}`);
    return Number(line.slice(name.length + 1));
  };
  return {
    commits: value('tessera_event_store_commits_total'),
    appends: value('tessera_event_store_committed_appends_total'),
    commitSeconds: value('tessera_event_store_commit_seconds_total'),
    roundTripSeconds: value('tessera_event_store_commit_round_trip_seconds_total'),
  };
}

/** Group commit over a run: appends per commit, and ms per commit in the writer and for the round trip. */
export interface GroupCommit {
  readonly commits: number;
  readonly groupSize: number;
  readonly commitMs: number;
  readonly roundTripMs: number;
}

export function groupCommitBetween(before: WriterTotals, after: WriterTotals): GroupCommit {
  const commits = after.commits - before.commits;
  return {
    commits,
    groupSize: commits === 0 ? 0 : (after.appends - before.appends) / commits,
    commitMs: commits === 0 ? 0 : ((after.commitSeconds - before.commitSeconds) * 1000) / commits,
    roundTripMs: commits === 0 ? 0 : ((after.roundTripSeconds - before.roundTripSeconds) * 1000) / commits,
  };
}
