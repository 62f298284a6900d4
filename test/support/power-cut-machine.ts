import { spawn, spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import Database from 'better-sqlite3';
import kafkajs from 'kafkajs';
import { liveSegments, readManifest, readSegment, sha256File, type ArchivedEvent } from '@tessera/archive';
import { lazyFsBinary, mountLazyFs, pidsUsing } from '../../infra/lazyfs/lazyfs.js';
import { seededRandom } from '../sim/seeded-random.js';
import {
  current,
  expectationsAt,
  lastAcknowledged,
  jtisThatChanged,
  Ledger,
  lostFromTheRecord,
  owedDeliveries,
  TheRecord,
  toldButNotRecorded,
  type CutTally,
  type Expectation,
  type HeldFamily,
  type HeldPair,
  type PublishedEvent,
  type ToldRevocation,
} from './power-cut-ledger.js';
import { freePort, startTessera, type TesseraProcess } from './tessera-process.js';
import { until } from './until.js';

/**
 * A machine that loses power, again and again: one all-in-one (`tessera start`, the compiled CLI)
 * whose whole data folder (events.db, keys/, archive/, the checkpoints, tls/) lives on a LazyFS
 * mount, with a Kafka relay, a pushed and a polled Shared Signals stream, and a hot window of a
 * second so that closed families are archived while the load runs. The data folder lives on from
 * cut to cut, as a real machine's disk does.
 *
 * Each `cut()`: drive issuances, refreshes and revocations (several in flight), then at a seeded
 * moment, or as an archiving run reaches a seeded step (`aims`), cut the power exactly as
 * infra/lazyfs/lazyfs.ts describes (SIGKILL every process using the mount and wait for each to
 * exit, `clear-cache`, unmount, mount the same root again), check what the folder holds before
 * anything runs on it, restart the server and check what it does. What it found is returned, never
 * thrown: the e2e test asserts it is empty, the bench counts it.
 */

export interface PowerCutMachineOptions {
  /** The lazyfs binary (lazyFsBinary()). */
  readonly binary: string;
  /** Kafka's bootstrap address: the relay publishes there, and a consumer here reads it back. */
  readonly brokers: string;
  readonly seed: number;
  /** Progress, one line at a time. */
  readonly log?: (line: string) => void;
}

/** What a cut found wrong, by kind: every list is empty on a machine that keeps its word. */
export interface CutFindings {
  /** Acknowledged work the machine no longer has: an event on neither the log nor the archive, a revoked or replaced token accepted, something told to a receiver or the topic that the record forgot. */
  readonly lost: string[];
  /** Acknowledged tokens refused after the restart, and answers during the load that were neither 200 nor the power going. */
  readonly refused: string[];
  /** A relay, Shared Signals or audit index position past the log's head, or a checkpoint file left unreadable. */
  readonly checkpointPastLog: string[];
  /** `tessera archive verify` failing, or a segment the manifest lists that is not whole. */
  readonly archive: string[];
  /** PRAGMA integrity_check of events.db. */
  readonly integrity: string[];
  /** The server not ready again, or not serving. */
  readonly restart: string[];
  /** Acknowledged work missing from the audit trail the admin API answers (hot index and archive). */
  readonly auditTrail: string[];
  /** Acknowledged revocations and rotations not delivered after the restart: to a receiver, or to the topic; a SET sent again under another jti. */
  readonly undelivered: string[];
}

/** A report's findings before anything is found. */
export function noFindings(): CutFindings {
  return { lost: [], refused: [], checkpointPastLog: [], archive: [], integrity: [], restart: [], auditTrail: [], undelivered: [] };
}

export interface CutReport {
  readonly cut: number;
  readonly tally: CutTally;
  /** When the power went, after the load started. */
  readonly cutAfterMs: number;
  /** What the cut waited for: a seeded moment, or a step of an archiving run; and whether it came. */
  readonly aim: { readonly at: Aim; readonly met: boolean };
  /** What the archiver was doing when the power went, as the folder shows it. */
  readonly archiveAtCut: string;
  readonly archive: { readonly entries: number; readonly liveSegments: number; readonly archivedEvents: number };
  /** Files the cut left empty (not -wal, -shm or temporary files): written and never fsynced. */
  readonly emptyFiles: string[];
  readonly findings: CutFindings;
  /** How much was checked: families looked for on the record, requests whose answer was dictated, audit rows read, SETs and topic messages held against the record, deliveries owed. */
  readonly checked: Checked;
  readonly timings: {
    readonly loadMs: number;
    readonly powerCutMs: number;
    readonly checksBeforeRestartMs: number;
    readonly restartMs: number;
    readonly checksAfterRestartMs: number;
    /** Of the checks after the restart: the token answers, the audit index catching up, the audit trail's pages, the deliveries. */
    readonly serverChecks: { tokensMs: number; auditCatchUpMs: number; auditQueryMs: number; deliveriesMs: number };
    readonly totalMs: number;
  };
}

export interface Checked {
  families: number;
  expectations: number;
  auditRows: number;
  toldSets: number;
  topicMessages: number;
  owedDeliveries: number;
}

export interface PowerCutMachine {
  readonly seed: number;
  readonly ledger: Ledger;
  /** Where the mount, its root folder and the server logs are. */
  readonly workDir: string;
  cut(): Promise<CutReport>;
  /** Kills what still runs on the mount, unmounts, and removes the work folder unless `keep`. */
  close(options?: { keep?: boolean }): Promise<void>;
}

/** Why LazyFS cannot run here, or undefined when it can: the binary, /dev/fuse usable by this user, fusermount3. */
export function lazyFsMissing(): string | undefined {
  if (lazyFsBinary() === undefined) return 'no LazyFS binary (run infra/lazyfs/build.sh, or set TESSERA_LAZYFS to it)';
  try {
    accessSync('/dev/fuse', constants.R_OK | constants.W_OK);
  } catch {
    return '/dev/fuse is missing or not usable by this user (a container needs --device /dev/fuse and CAP_SYS_ADMIN)';
  }
  if (spawnSync('fusermount3', ['-V'], { stdio: 'ignore' }).error !== undefined) return 'fusermount3 is not on PATH (Debian: apt-get install fuse3)';
  return undefined;
}

/** The seed a run was asked to replay (a decimal number, e.g. TESSERA_POWER_CUT_SEED), or a new one. */
export function powerCutSeed(asked: string | undefined): number {
  if (asked === undefined || asked === '') return randomInt(2 ** 32);
  const seed = Number(asked);
  if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32) throw new Error(`a power-cut seed is a whole number from 0 to 4294967295, got ${asked}`);
  return seed;
}

/** Every finding of a report, each line prefixed by its kind. */
export function findingsOf(report: CutReport): string[] {
  return Object.entries(report.findings).flatMap(([kind, lines]: [string, string[]]) => lines.map((line) => `${kind}: ${line}`));
}

/** Per kind of finding: how many, and the first few, for a log a person reads. */
export function summariseFindings(report: CutReport, examples = 3): string[] {
  return Object.entries(report.findings).flatMap(([kind, lines]: [string, string[]]) =>
    lines.length === 0 ? [] : [`${kind}: ${lines.length}`, ...lines.slice(0, examples).map((line) => `  ${line}`), ...(lines.length > examples ? [`  … and ${lines.length - examples} more`] : [])],
  );
}

/** One line per cut: what was acknowledged, where the power went, what was found, how long it took. */
export function describeCut(report: CutReport): string {
  const { acknowledged, unanswered } = report.tally;
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  const found = findingsOf(report);
  return [
    `cut ${report.cut}: power off ${seconds(report.cutAfterMs)} s into the load, aimed at ${report.aim.at}${report.aim.met ? '' : ' (not seen: cut anyway)'}; acknowledged ${acknowledged.issue} issuances, ${acknowledged.refresh} refreshes, ${acknowledged.revoke} revocations;`,
    `in flight (no answer) ${unanswered.issue + unanswered.refresh + unanswered.revoke}; archiver: ${report.archiveAtCut}; archive ${report.archive.entries} entries, ${report.archive.liveSegments} live segments, ${report.archive.archivedEvents} events;`,
    `${report.emptyFiles.length === 0 ? 'no file left empty' : `left empty: ${report.emptyFiles.join(', ')}`};`,
    `checked ${report.checked.families} families on the record, ${report.checked.expectations} token answers, ${report.checked.auditRows} audit rows, ${report.checked.toldSets} SETs and ${report.checked.topicMessages} topic messages against the record, ${report.checked.owedDeliveries} deliveries;`,
    `${found.length === 0 ? 'nothing lost' : `${found.length} FINDINGS`};`,
    `${seconds(report.timings.totalMs)} s (load ${seconds(report.timings.loadMs)}, cut ${seconds(report.timings.powerCutMs)}, folder checks ${seconds(report.timings.checksBeforeRestartMs)}, restart ${seconds(report.timings.restartMs)}, server checks ${seconds(report.timings.checksAfterRestartMs)}: tokens ${seconds(report.timings.serverChecks.tokensMs)}, audit index catch-up ${seconds(report.timings.serverChecks.auditCatchUpMs)}, audit pages ${seconds(report.timings.serverChecks.auditQueryMs)}, deliveries ${seconds(report.timings.serverChecks.deliveriesMs)})`,
  ].join(' ');
}

const repositoryRoot = resolve(import.meta.dirname, '..', '..');
const cli = join(repositoryRoot, 'services', 'cli', 'bin', 'tessera.js');
const sessionRevoked = 'https://schemas.openid.net/secevent/caep/event-type/session-revoked';

/** Seconds: tokens outlive a cut's load, restart and checks; families then close soon enough to be archived a cut or two later. */
const tokenLifeSeconds = 20;
/** Seconds: segments past it are deleted (on the record), so deletion happens under the cuts too. */
const auditRetentionSeconds = 90;
/** Families last touched longer ago than the audit retention less this are not looked for: their segment may be gone, as it should. */
const retentionMarginMs = 15_000;
const loadWorkers = 4;
/** The power goes between these, after the load starts (ms). */
const cutWindow = [1_500, 5_000] as const;
/**
 * What a cut waits for. Archiving runs take milliseconds of each second, so a seeded moment alone
 * almost never lands inside one: three cuts in four are aimed at a step of a run instead, seen in the
 * archive folder (packages/archive: a segment goes to `<n>.parquet.tessera-tmp`, is fsynced,
 * renamed and read back; then `manifest/<n>.sig` and `<n>.json`; then the head in the log; then
 * the events leave the hot log).
 */
export const aims = ['a seeded moment', 'a segment being written', 'a segment written, no entry yet', 'a manifest entry just written'] as const;
export type Aim = (typeof aims)[number];
/** An aimed cut waits at most this long past the window for its step, then cuts anyway (ms). */
const aimPatienceMs = 4_000;

/** The processes to kill are found this long before the cut (ms). */
const victimsFoundBeforeMs = 250;
/** How long after the restart every acknowledged revocation and rotation has to reach the receivers and the topic. */
const deliveryDeadlineMs = 25_000;

export async function startPowerCutMachine(options: PowerCutMachineOptions): Promise<PowerCutMachine> {
  const log = options.log ?? (() => undefined);
  const random = seededRandom(options.seed);
  const workDir = mkdtempSync(join(tmpdir(), 'tessera-power-cut-'));
  const logsDir = join(workDir, 'logs');
  mkdirSync(logsDir);
  // The cache holds what is not fsynced yet: the audit index's WAL (synchronous=NORMAL) is most of it.
  let mount = await mountLazyFs({ binary: options.binary, mountPoint: join(workDir, 'mnt'), rootDir: join(workDir, 'root'), cacheMiB: 256 });
  const dataDir = join(mount.mountPoint, 'data');
  const ledger = new Ledger();
  const topic = `tessera.revocations.power-cut.${process.pid}.${Date.now()}`;
  const push = await startPushReceiver();
  const env: Record<string, string> = {
    TESSERA_PORT: String(await freePort()),
    TESSERA_KAFKA_BROKERS: options.brokers,
    TESSERA_KAFKA_TOPIC: topic,
    TESSERA_SSF_ALLOW_HTTP_PUSH: 'true',
    // The push receiver listens on loopback, which the egress policy refuses unless named.
    TESSERA_EGRESS_ALLOW: '127.0.0.1',
    TESSERA_SSF_PUSH_TIMEOUT: '2',
    TESSERA_SSF_POLL_WAIT: '1',
    TESSERA_ACCESS_TOKEN_TTL: String(tokenLifeSeconds),
    TESSERA_REFRESH_TOKEN_TTL: String(tokenLifeSeconds),
    TESSERA_CLOCK_SKEW: '0',
    TESSERA_HOT_RETENTION: '1',
    TESSERA_ARCHIVE_INTERVAL: '1',
    TESSERA_AUDIT_RETENTION: String(auditRetentionSeconds),
    TESSERA_AUDIT_QUERY_BUDGET_MS: '30000',
    // Checking replaced and revoked refresh tokens is a stream of 401s from one address: no budget may stop it.
    TESSERA_THROTTLE_CREDENTIAL_FAILURES: '0',
    TESSERA_THROTTLE_ADDRESS_FAILURES: '0',
    TESSERA_THROTTLE_REFRESH_FAILURES: '0',
    TESSERA_THROTTLE_PROXY_FAILURES: '0',
  };
  let incarnation = 1;
  const start = () => startTessera(env, { dataDir, keepData: true, logFile: join(logsDir, `server-${incarnation}.log`) });
  let server: TesseraProcess | undefined = await start();
  let client = new TesseraClient(server.baseUrl, readFileSync(join(dataDir, 'tls', 'self-signed.crt')));
  const account = await server.createAccount({ name: 'power-cut shop' });
  const receiverToken = cliJson<{ token: string }>(await server.tessera(['ssf-receivers', 'create', '--name', 'power-cut receiver', '--json'])).token;
  const adminToken = cliJson<{ admin_token: string }>(await server.tessera(['admin-tokens', 'create', '--name', 'power-cut auditor', '--scope', 'audit:read', '--json'])).admin_token;
  const receiverAuth = { authorization: `Bearer ${receiverToken}` };
  await until(async () => (await client.get('/ssf/streams', receiverAuth)).status === 200, 'the receiver token to be accepted', { timeoutMs: 10_000 });
  const subject = { format: 'iss_sub', iss: `https://127.0.0.1:${env.TESSERA_PORT}`, sub: account.account_id };
  const pushStream = await client.post('/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: push.url } }, receiverAuth);
  const pollStream = await client.post('/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } }, receiverAuth);
  if (pushStream.status !== 201 || pollStream.status !== 201) throw new Error(`could not create the streams: ${pushStream.status} ${pushStream.body} / ${pollStream.status} ${pollStream.body}`);
  // Cast: a 201 of POST /ssf/streams is the stream's configuration (docs/shared-signals.md).
  const [pushStreamId, pollStreamId] = [pushStream, pollStream].map((answer) => (JSON.parse(answer.body) as { stream_id: string }).stream_id) as [string, string];
  for (const streamId of [pushStreamId, pollStreamId]) {
    const added = await client.post('/ssf/subjects/add', { stream_id: streamId, subject }, receiverAuth);
    if (added.status !== 200) throw new Error(`could not add the account to stream ${streamId}: ${added.status} ${added.body}`);
  }
  const topicWatch = await watchTopic(options.brokers, topic);
  let poller = startPoller(() => client, pollStreamId, receiverAuth);
  const segmentCache = new Map<string, ArchivedEvent[]>();
  const firstAim = random.between(0, aims.length - 1);
  let aimed = 0;
  let cuts = 0;
  let down: string | undefined;
  log(`power cuts: seed ${options.seed}; machine in ${workDir} (LazyFS mount ${mount.mountPoint}), server on port ${env.TESSERA_PORT}, topic ${topic}`);

  /** One worker of the load: operations back to back, with a seeded pause, until the power goes. */
  async function worker(cut: number, running: () => boolean): Promise<void> {
    while (running()) {
      const usable = ledger.usable(Date.now());
      const roll = random.next();
      if (usable.length === 0 || roll < 0.4) await issue(cut, client);
      else if (roll < 0.8) await refresh(cut, client, random.pick(usable));
      else await revoke(cut, client, random.pick(usable));
      await delay(random.between(0, 20));
    }
  }

  async function issue(cut: number, using: TesseraClient): Promise<void> {
    const sentAt = Date.now();
    const answer = await using.tryPost('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
    if (answer === undefined) return ledger.unanswered('issue', cut);
    if (answer.status !== 200) return void ledger.tally(cut).unexpected.push(`get-oauth-token answered ${answer.status}: ${answer.body.slice(0, 200)}`);
    const pair = pairOf(answer.body, sentAt, cut);
    ledger.issued(pair.familyId, pair.pair);
  }

  async function refresh(cut: number, using: TesseraClient, family: HeldFamily): Promise<void> {
    family.busy = true;
    const sentAt = Date.now();
    try {
      const answer = await using.tryPost('/v5/Authorization/refresh-oauth-token', { refresh_token: current(family).refreshToken });
      if (answer === undefined) return ledger.unanswered('refresh', cut, family);
      if (answer.status !== 200) return void ledger.tally(cut).unexpected.push(`refresh-oauth-token of family ${family.familyId} (generation ${current(family).generation}, acknowledged at ${new Date(current(family).acknowledgedAt).toISOString()}) answered ${answer.status}: ${answer.body.slice(0, 200)}`);
      ledger.refreshed(family, pairOf(answer.body, sentAt, cut).pair);
    } finally {
      family.busy = false;
    }
  }

  async function revoke(cut: number, using: TesseraClient, family: HeldFamily): Promise<void> {
    family.busy = true;
    try {
      const answer = await using.tryPost('/v5/Authorization/revoke-oauth-token', { refresh_token: current(family).refreshToken });
      if (answer === undefined) return ledger.unanswered('revoke', cut, family);
      if (answer.status !== 200) return void ledger.tally(cut).unexpected.push(`revoke-oauth-token of family ${family.familyId} (generation ${current(family).generation}) answered ${answer.status}: ${answer.body.slice(0, 200)}`);
      ledger.revoked(family, Date.now(), cut);
    } finally {
      family.busy = false;
    }
  }

  /** The processes using the mount now: the server, and anything else that has a file of it open. */
  function onTheMount(): number[] {
    return [...new Set([...(server === undefined ? [] : [server.pid]), ...pidsUsing(mount.mountPoint)])];
  }

  /**
   * Step 1 of a power cut: every process on the mount killed, and gone, before anything else
   * happens. `victims` were found just before: reading /proc takes this process tens of ms, during
   * which it reads no answer and sends no request while the server finishes what it was sent, so
   * a scan at the cut would leave nothing in flight. Whatever a scan finds after is killed too.
   */
  async function killEverythingOnTheMount(victims: readonly number[]): Promise<void> {
    const kill = (pid: number) => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    };
    victims.forEach(kill);
    const late = pidsUsing(mount.mountPoint).filter((pid) => !victims.includes(pid));
    late.forEach(kill);
    const pids = [...victims, ...late];
    await until(() => pids.every(gone), `processes ${pids.join(', ')} to exit after SIGKILL`, { timeoutMs: 10_000 });
    await server?.exited;
  }

  /** Everything about the data folder as the cut left it, read before any process opens it. */
  async function checkTheFolder(findings: CutFindings, checked: Checked, now: number) {
    const eventsDb = join(dataDir, 'events.db');
    const hot = readHotLog(eventsDb);
    findings.integrity.push(...hot.integrity.filter((line) => line !== 'ok').map((line) => `events.db: ${line}`));
    for (const [file, positions] of checkpointPositions(dataDir, findings)) {
      for (const [what, position] of positions) if (position > hot.head) findings.checkpointPastLog.push(`${file}: ${what} is at position ${position}, past the log's head ${hot.head}`);
    }
    const indexed = auditIndexPosition(join(dataDir, 'audit-index.db'));
    if (indexed !== undefined && indexed > hot.head) findings.checkpointPastLog.push(`audit-index.db reflects the log up to position ${indexed}, past the log's head ${hot.head}`);

    const archiveDir = join(dataDir, 'archive');
    const record = new TheRecord();
    for (const event of hot.events) record.add(event);
    const archive = await readArchive(archiveDir, segmentCache, findings);
    for (const event of archive.events) record.add({ position: event.position, stream: event.stream, type: event.type, familyId: event.familyId, generation: event.generation });
    const since = now - auditRetentionSeconds * 1000 + retentionMarginMs;
    findings.lost.push(...lostFromTheRecord(ledger, record, since));
    const told = { push: push.received, poll: poller.received, topic: topicWatch.published.filter((event) => event.stream.startsWith('tokenfamily-')) };
    findings.lost.push(...toldButNotRecorded(record, told, since));
    checked.families = [...ledger.families.values()].filter((family) => lastAcknowledged(family) >= since).length;
    checked.toldSets = told.push.length + told.poll.length;
    checked.topicMessages = told.topic.length;
    const verify = await runCli(server?.env ?? {}, ['archive', 'verify', '--json']);
    const nothingArchivedYet = verify.code === 3 && /no archive at/.test(verify.stderr) && !existsSync(join(archiveDir, 'manifest'));
    if (verify.code !== 0 && !nothingArchivedYet) findings.archive.push(`tessera archive verify exited ${verify.code}: ${(verify.stderr || verify.stdout).trim().slice(0, 500)}`);
    return {
      head: hot.head,
      archive: { entries: archive.entries, liveSegments: archive.live, archivedEvents: archive.events.length },
      archiveAtCut: archiveActivity(archiveDir, archive, hot),
      emptyFiles: emptyFilesIn(dataDir),
    };
  }

  /** The server again, and what it answers for everything the ledger holds. */
  async function checkTheServer(findings: CutFindings, checked: Checked, spent: CutReport['timings']['serverChecks'], cut: number, headBeforeRestart: bigint): Promise<void> {
    const now = Date.now();
    const expectations = expectationsAt(ledger, now);
    checked.expectations = expectations.length;
    await inTurns(expectations, 16, (expectation) => expectAnswer(expectation, findings));
    const fresh = await client.tryPost('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
    if (fresh?.status !== 200) findings.restart.push(`after the restart get-oauth-token answered ${fresh?.status ?? 'nothing'}: ${fresh?.body.slice(0, 200) ?? ''}`);
    else {
      const { familyId, pair } = pairOf(fresh.body, now, cut);
      ledger.issued(familyId, pair);
      const charged = await client.post('/v5/Transaction/charge', {}, { authorization: `Bearer ${pair.accessToken}` });
      if (charged.status !== 200) findings.restart.push(`after the restart a new access token was refused on a protected route: ${charged.status}`);
    }
    const tokensDone = Date.now();
    spent.tokensMs = tokensDone - now;
    checked.auditRows = await checkTheAuditTrail(findings, spent, headBeforeRestart);
    const auditDone = Date.now();
    spent.auditQueryMs = auditDone - tokensDone - spent.auditCatchUpMs;
    checked.owedDeliveries = await checkDeliveries(findings, now - auditRetentionSeconds * 1000 + retentionMarginMs);
    spent.deliveriesMs = Date.now() - auditDone;
  }

  async function expectAnswer(expectation: Expectation, findings: CutFindings): Promise<void> {
    const answer =
      expectation.presents === 'access'
        ? await client.tryPost('/v5/Transaction/charge', {}, { authorization: `Bearer ${expectation.token}` })
        : await client.tryPost('/v5/Authorization/refresh-oauth-token', { refresh_token: expectation.token });
    if (answer?.status === expectation.status) return;
    const what = `family ${expectation.familyId}: its ${expectation.presents} token (${expectation.why}) got ${answer?.status ?? 'no answer'} after the restart, not ${expectation.status}`;
    if (expectation.status === 401 && answer?.status === 200) {
      findings.lost.push(what);
      // The refresh went through: the family is no longer what the ledger holds, so it takes no more load.
      const family = ledger.families.get(expectation.familyId);
      if (family !== undefined && expectation.presents === 'refresh') family.inDoubt = 'refresh';
    } else findings.refused.push(what);
  }

  /**
   * Every acknowledged family event in the audit trail, once the index has caught up with the log:
   * with the head as the cut left it, and as the server's own checks since have moved it. Families
   * are looked for from the audit retention before the last page was read, not the first: paging
   * can take many seconds, and segments past the retention are deleted meanwhile, as they should be.
   */
  async function checkTheAuditTrail(findings: CutFindings, spent: CutReport['timings']['serverChecks'], headAtCut: bigint): Promise<number> {
    const waitedFrom = Date.now();
    const admin = server!;
    const auth = { authorization: `Bearer ${adminToken}` };
    const metrics = await admin.adminRequest('/metrics');
    const served = /^tessera_event_store_head_position (\d+)$/m.exec(metrics.text)?.[1];
    const head = served !== undefined && BigInt(served) > headAtCut ? BigInt(served) : headAtCut;
    let reached = 'no answer';
    const caughtUp = await until(
      async () => {
        const answer = await admin.adminRequest('/admin/v1/events?limit=1', { headers: auth });
        if (answer.status !== 200) {
          reached = `${answer.status} ${answer.text.slice(0, 200)}`;
          return false;
        }
        // Cast: every events answer names the position the index reflects (docs/audit.md).
        const position = (JSON.parse(answer.text) as { log_position: string | null }).log_position;
        reached = `log_position ${position}`;
        return position !== null && BigInt(position) >= head;
      },
      'the audit index to catch up',
      { timeoutMs: 30_000 },
    ).then(
      () => true,
      () => false,
    );
    spent.auditCatchUpMs = Date.now() - waitedFrom;
    if (!caughtUp) {
      findings.auditTrail.push(`the audit index did not reach the log's head ${head} within 30 s after the restart (last answer: ${reached})`);
      return 0;
    }
    const trail = new TheRecord();
    let rows = 0;
    let cursor: string | null = null;
    do {
      const path: string = `/admin/v1/events?account=${account.account_id}&type=TokenIssued&type=TokenRotated&type=TokenRevoked&limit=1000${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const answer = await admin.adminRequest(path, { headers: auth, silenceMs: 35_000 });
      if (answer.status !== 200) {
        findings.auditTrail.push(`GET ${path} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
        return rows;
      }
      // Cast: the events query's page (docs/audit.md, "Rows").
      const page = JSON.parse(answer.text) as { events: { position: string; type: string; family_id: string | null; generation: number | null }[]; next_cursor: string | null };
      rows += page.events.length;
      for (const row of page.events) trail.add({ position: BigInt(row.position), stream: `tokenfamily-${row.family_id}`, type: row.type, familyId: row.family_id ?? undefined, generation: row.generation ?? undefined });
      cursor = page.next_cursor;
    } while (cursor !== null);
    const since = Date.now() - auditRetentionSeconds * 1000 + retentionMarginMs;
    findings.auditTrail.push(...lostFromTheRecord(ledger, trail, since).map((line) => line.replace('is in neither the log nor the archive', 'is missing from the audit trail')));
    return rows;
  }

  /** Every acknowledged revocation reaches both receivers, and every acknowledged revocation and rotation the topic, after the restart. */
  async function checkDeliveries(findings: CutFindings, since: number): Promise<number> {
    const owed = owedDeliveries(ledger, since);
    const missing = () => {
      const pushed = new Set(push.received.map((set) => set.familyId));
      const polled = new Set(poller.received.map((set) => set.familyId));
      const published = new Set(topicWatch.published.map((event) => `${event.familyId}|${event.type}|${event.type === 'TokenRotated' ? event.generation : ''}`));
      return [
        ...owed.revocations.filter((family) => !pushed.has(family)).map((family) => `the revocation of family ${family} never reached the push receiver`),
        ...owed.revocations.filter((family) => !polled.has(family)).map((family) => `the revocation of family ${family} never reached the poll receiver`),
        ...owed.revocations.filter((family) => !published.has(`${family}|TokenRevoked|`)).map((family) => `the revocation of family ${family} is not on the topic`),
        ...owed.rotations.filter(({ familyId, generation }) => !published.has(`${familyId}|TokenRotated|${generation}`)).map(({ familyId, generation }) => `the refresh of family ${familyId} to generation ${generation} is not on the topic`),
      ];
    };
    await until(() => missing().length === 0, 'every acknowledged revocation and rotation to be delivered', { timeoutMs: deliveryDeadlineMs }).catch(() => undefined);
    findings.undelivered.push(...missing().map((line) => `${line} within ${deliveryDeadlineMs / 1000} s of the restart`));
    findings.undelivered.push(...jtisThatChanged([...push.received]), ...jtisThatChanged([...poller.received]));
    return owed.revocations.length * 3 + owed.rotations.length;
  }

  return {
    seed: options.seed,
    ledger,
    workDir,
    async cut(): Promise<CutReport> {
      if (down !== undefined) throw new Error(`the machine is down since an earlier cut: ${down}`);
      cuts += 1;
      const cut = cuts;
      const findings = noFindings();
      const checked: Checked = { families: 0, expectations: 0, auditRows: 0, toldSets: 0, topicMessages: 0, owedDeliveries: 0 };
      const serverChecks = { tokensMs: 0, auditCatchUpMs: 0, auditQueryMs: 0, deliveriesMs: 0 };
      const startedAt = Date.now();
      // 1. The load, until the power goes at a seeded moment or at the step of an archiving run aimed at.
      const moment = random.between(...cutWindow);
      // Until a first run has archived something, no run's step can be seen coming. After, the aims
      // take turns, so that every run of the test reaches each step rather than by luck.
      const aim = existsSync(join(dataDir, 'archive', 'manifest', '00000001.json')) ? aims[(firstAim + (aimed += 1)) % aims.length]! : aims[0];
      let powered = true;
      const workers = Array.from({ length: loadWorkers }, () => worker(cut, () => powered));
      let met = true;
      let victims: number[];
      if (aim === 'a seeded moment') {
        await delay(moment - victimsFoundBeforeMs);
        victims = onTheMount();
        await delay(victimsFoundBeforeMs);
      } else {
        await delay(cutWindow[0]);
        victims = onTheMount();
        const sign = archiveSign(join(dataDir, 'archive'), aim);
        const giveUpAt = startedAt + cutWindow[1] + aimPatienceMs;
        while (!sign() && (met = Date.now() < giveUpAt)) await delay(2);
      }
      // 2. The power cut.
      const cutAt = Date.now();
      powered = false;
      await killEverythingOnTheMount(victims);
      await Promise.all([...workers, poller.stop()]);
      client.close();
      const held = filesHeldOn(mount.mountPoint);
      if (held.length > 0) throw new Error(`the test process holds files of the mount open, so it cannot be unmounted as a power cut does: ${held.join(', ')}`);
      await mount.clearCache();
      await mount.unmount();
      mount = await mountLazyFs(mount.options);
      const remountedAt = Date.now();
      // 3. The folder as the cut left it, before anything runs on it.
      const { head, ...folder } = await checkTheFolder(findings, checked, remountedAt);
      const checkedAt = Date.now();
      // 4. The server again, on the same folder.
      incarnation += 1;
      try {
        server = await start();
      } catch (error) {
        server = undefined;
        down = `cut ${cut}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
        findings.restart.push(`the server did not become ready again: ${error instanceof Error ? error.message.slice(0, 3000) : String(error)}`);
      }
      const restartedAt = Date.now();
      if (server !== undefined) {
        client = new TesseraClient(server.baseUrl, readFileSync(join(dataDir, 'tls', 'self-signed.crt')));
        poller = startPoller(() => client, pollStreamId, receiverAuth, poller.received);
        await checkTheServer(findings, checked, serverChecks, cut, head);
      }
      findings.refused.push(...ledger.tally(cut).unexpected);
      const endedAt = Date.now();
      return {
        cut,
        tally: ledger.tally(cut),
        cutAfterMs: cutAt - startedAt,
        aim: { at: aim, met },
        ...folder,
        findings,
        checked,
        timings: {
          loadMs: cutAt - startedAt,
          powerCutMs: remountedAt - cutAt,
          checksBeforeRestartMs: checkedAt - remountedAt,
          restartMs: restartedAt - checkedAt,
          checksAfterRestartMs: endedAt - restartedAt,
          serverChecks,
          totalMs: endedAt - startedAt,
        },
      };
    },
    async close({ keep = false } = {}) {
      await poller.stop();
      client.close();
      await topicWatch.stop();
      await push.stop();
      for (const pid of pidsUsing(mount.mountPoint)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
      await server?.exited;
      await mount.unmount();
      if (!keep) rmSync(workDir, { recursive: true, force: true });
    },
  };
}

/** The family and the pair an answer of get-oauth-token or refresh-oauth-token carries. */
function pairOf(body: string, sentAt: number, cut: number): { familyId: string; pair: HeldPair } {
  // Cast: a 200 of get-oauth-token and refresh-oauth-token has these fields (docs/interface.md).
  const answer = JSON.parse(body) as { token: string; refresh_token: string };
  // Cast: Tessera's access tokens carry the family, its generation and the expiry (docs/verification.md).
  const claims = JSON.parse(Buffer.from(answer.token.split('.')[1]!, 'base64url').toString('utf8')) as { fid: string; gen: number; exp: number };
  return {
    familyId: claims.fid,
    pair: {
      generation: claims.gen,
      accessToken: answer.token,
      refreshToken: answer.refresh_token,
      accessExpiresAt: claims.exp * 1000,
      refreshExpiresAt: (Math.floor(sentAt / 1000) + tokenLifeSeconds) * 1000,
      acknowledgedAt: Date.now(),
      cut,
    },
  };
}

function cliJson<T>(output: { stdout: string }): T {
  // Cast: the CLI's --json output of the command asked for (docs/operations.md); each caller names its fields.
  return JSON.parse(output.stdout) as T;
}

const delay = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** `act` on every item, at most `width` at a time. */
async function inTurns<T>(items: readonly T[], width: number, act: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await act(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}

/** A process that has exited: no longer in /proc, or a zombie (which holds no file). */
function gone(pid: number): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

interface Answer {
  readonly status: number;
  readonly body: string;
}

/**
 * HTTPS with kept-alive connections, as a real client pool: thousands of checks after each restart
 * would otherwise spend most of their time in TLS handshakes. Trusts the server's certificate by its file.
 */
class TesseraClient {
  private readonly agent: Agent;

  constructor(
    private readonly baseUrl: string,
    ca: Buffer,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: 16, ca });
  }

  post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    return this.send('POST', path, headers, JSON.stringify(body));
  }

  get(path: string, headers: Record<string, string> = {}): Promise<Answer> {
    return this.send('GET', path, headers);
  }

  /** undefined when no answer came: the connection failed or broke, as when the power goes. */
  tryPost(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer | undefined> {
    return this.post(path, body, headers).catch(() => undefined);
  }

  close(): void {
    this.agent.destroy();
  }

  private send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
    return new Promise((resolveAnswer, reject) => {
      const outgoing = request(new URL(path, this.baseUrl), { method, agent: this.agent, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers } }, (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => resolveAnswer({ status: incoming.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        incoming.on('error', reject);
      });
      outgoing.setTimeout(20_000, () => outgoing.destroy(new Error(`${method} ${path}: no answer within 20 s`)));
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }
}

/** A SET's claims that say which revocation it is. */
function toldRevocation(jwt: string): ToldRevocation | undefined {
  // Cast: a SET's payload (RFC 8417) as Tessera makes it (docs/shared-signals.md, "The events").
  const claims = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as { jti: string; txn: string; events: Record<string, unknown>; sub_id?: { session?: { id: string } } };
  const familyId = claims.sub_id?.session?.id;
  if (!(sessionRevoked in claims.events) || familyId === undefined) return undefined;
  return { familyId, jti: claims.jti, txn: claims.txn, receivedAt: Date.now() };
}

/** The push stream's endpoint: plain HTTP on loopback (TESSERA_SSF_ALLOW_HTTP_PUSH), every SET taken with 202. */
async function startPushReceiver(): Promise<{ url: string; received: ToldRevocation[]; stop: () => Promise<void> }> {
  const received: ToldRevocation[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const set = toldRevocation(Buffer.concat(chunks).toString('utf8').trim());
      if (set !== undefined) received.push(set);
      outgoing.writeHead(202).end();
    });
  });
  const port = await freePort();
  await new Promise<void>((listening) => server.listen(port, '127.0.0.1', listening));
  return {
    url: `http://127.0.0.1:${port}/events`,
    received,
    stop: () =>
      new Promise<void>((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}

/**
 * The polled stream's receiver: polls every 200 ms, acknowledging in each poll what the previous one
 * got (RFC 8936), until stopped. What it got is kept across restarts (`received`).
 */
function startPoller(client: () => TesseraClient, streamId: string, auth: Record<string, string>, received: ToldRevocation[] = []): { received: ToldRevocation[]; stop: () => Promise<void> } {
  let running = true;
  let unacknowledged: string[] = [];
  const loop = (async () => {
    while (running) {
      const answer = await client().tryPost(`/ssf/poll?stream_id=${streamId}`, { returnImmediately: true, maxEvents: 200, ack: unacknowledged }, auth);
      if (answer?.status === 200) {
        // Cast: an RFC 8936 poll answer.
        const { sets } = JSON.parse(answer.body) as { sets: Record<string, string> };
        for (const jwt of Object.values(sets)) {
          const set = toldRevocation(jwt);
          if (set !== undefined) received.push(set);
        }
        unacknowledged = Object.keys(sets);
      }
      if (running) await delay(200);
    }
  })();
  return {
    received,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** Everything the relay publishes to the topic, read back by a consumer of our own from the beginning. */
async function watchTopic(brokers: string, topic: string): Promise<{ published: PublishedEvent[]; stop: () => Promise<void> }> {
  const kafka = new kafkajs.Kafka({ clientId: 'power-cut-watch', brokers: brokers.split(','), logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  // The relay makes the topic once it reaches the broker.
  await until(async () => (await admin.listTopics()).includes(topic), `the relay to create ${topic}`, { timeoutMs: 30_000 }).finally(() => admin.disconnect());
  const consumer = kafka.consumer({ groupId: `power-cut-watch-${process.pid}-${Date.now()}`, maxWaitTimeInMs: 100 });
  const published: PublishedEvent[] = [];
  let joined!: () => void;
  const inGroup = new Promise<void>((resolveJoined) => (joined = resolveJoined));
  consumer.on(consumer.events.GROUP_JOIN, () => joined());
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      if (!message.value) return;
      // Cast: the topic's value (docs/kafka.md, "Value").
      const value = JSON.parse(message.value.toString('utf8')) as { position: string; stream: string; recordedAt: number; event: { type: string; familyId?: string; generation?: number } };
      published.push({ position: BigInt(value.position), stream: value.stream, type: value.event.type, familyId: value.event.familyId, generation: value.event.generation, recordedAt: value.recordedAt });
    },
  });
  await inGroup;
  return { published, stop: () => consumer.disconnect() };
}

interface HotLog {
  /** The highest position ever handed out (AUTOINCREMENT's counter), or the highest held. */
  readonly head: bigint;
  readonly events: { position: bigint; stream: string; type: string; familyId: string | undefined; generation: number | undefined }[];
  readonly integrity: string[];
  /** The newest archive head the log pins (ArchiveHeadRecorded), if any. */
  readonly pinnedHead: number | undefined;
}

/** events.db read-only, as the cut left it: its head, the families' events, the archive head it pins, its integrity. */
function readHotLog(file: string): HotLog {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    // Casts of better-sqlite3's rows: the columns selected, as the log's schema types them (packages/event-store-sqlite/src/sqlite-schema.ts).
    const head = BigInt(
      db
        .prepare("SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0), COALESCE((SELECT MAX(position) FROM events), 0))")
        .pluck()
        .get() as number,
    );
    const rows = db.prepare("SELECT position, stream, type, payload FROM events WHERE stream LIKE 'tokenfamily-%'").all() as { position: number; stream: string; type: string; payload: string }[];
    const events = rows.map((row) => {
      // Cast: a family event's payload names its family and generation (packages/contracts/src/events.ts).
      const payload = JSON.parse(row.payload) as { familyId?: string; generation?: number };
      return { position: BigInt(row.position), stream: row.stream, type: row.type, familyId: payload.familyId, generation: payload.generation };
    });
    // Cast: ArchiveHeadRecorded's payload (packages/contracts/src/events.ts).
    const heads = (db.prepare("SELECT payload FROM events WHERE type = 'ArchiveHeadRecorded'").pluck().all() as string[]).map((payload) => (JSON.parse(payload) as { sequence: number }).sequence);
    // Cast: integrity_check answers one text row per problem, or the one row `ok`.
    const integrity = db.prepare('PRAGMA integrity_check').pluck().all() as string[];
    return { head, events, integrity, pinnedHead: heads.length === 0 ? undefined : Math.max(...heads) };
  } finally {
    db.close();
  }
}

/**
 * The positions every checkpoint file in the data folder holds; an unreadable one is a finding.
 * The transmitter's checkpoints are events in the log itself (SsfDeliveryCheckpointed), so they
 * cannot run past it; what a cut does to them shows as SETs undelivered or sent again after the restart.
 */
function checkpointPositions(dataDir: string, findings: CutFindings): [string, [string, bigint][]][] {
  const files: [string, [string, bigint][]][] = [];
  for (const name of ['relay-checkpoint.json', 'relay-accounts-checkpoint.json', 'relay-families-checkpoint.json']) {
    const file = join(dataDir, name);
    if (!existsSync(file)) continue;
    try {
      // Cast: a relay's file holds {position} (its writer's schema).
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as { position?: string };
      const positions: [string, bigint][] = parsed.position !== undefined ? [['the relay', BigInt(parsed.position)]] : [];
      files.push([name, positions]);
    } catch (error) {
      findings.checkpointPastLog.push(`${name} is unreadable after the cut: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return files;
}

/** The last log position the audit index says it reflects; undefined when it has none or cannot be read (it is derived, and rebuilt). */
function auditIndexPosition(file: string): bigint | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      // Cast: meta's values are text (packages/audit/src/audit-index-schema.ts).
      const value = db.prepare("SELECT value FROM meta WHERE key = 'log_position'").pluck().get() as string | undefined;
      return value === undefined ? undefined : BigInt(value);
    } finally {
      db.close();
    }
  } catch {
    return undefined;
  }
}

interface ArchiveRead {
  readonly entries: number;
  readonly lastSequence: number;
  readonly live: number;
  readonly events: ArchivedEvent[];
  /** Positions of the newest live segment. */
  readonly newestSegment: readonly bigint[];
}

/** Every live segment the manifest lists, checked whole (its SHA-256 and its rows) and read. */
async function readArchive(archiveDir: string, cache: Map<string, ArchivedEvent[]>, findings: CutFindings): Promise<ArchiveRead> {
  let entries;
  try {
    entries = readManifest(archiveDir);
  } catch (error) {
    findings.archive.push(`the manifest cannot be read after the cut: ${error instanceof Error ? error.message : String(error)}`);
    return { entries: 0, lastSequence: 0, live: 0, events: [], newestSegment: [] };
  }
  const live = liveSegments(entries);
  const events: ArchivedEvent[] = [];
  let newestSegment: bigint[] = [];
  for (const entry of live) {
    const file = join(archiveDir, entry.segment.file);
    const key = `${entry.segment.file}@${entry.segment.sha256}`;
    let rows = cache.get(key);
    if (rows === undefined) {
      if (!existsSync(file)) {
        findings.archive.push(`segment ${entry.segment.file} (entry ${entry.sequence}) is missing`);
        continue;
      }
      const sha256 = sha256File(file);
      if (sha256 !== entry.segment.sha256) {
        findings.archive.push(`segment ${entry.segment.file} hashes to ${sha256}, not the ${entry.segment.sha256} entry ${entry.sequence} records`);
        continue;
      }
      try {
        rows = await readSegment(file);
      } catch (error) {
        findings.archive.push(`segment ${entry.segment.file} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
        continue;
      }
      if (rows.length !== entry.segment.rows) {
        findings.archive.push(`segment ${entry.segment.file} holds ${rows.length} rows, not the ${entry.segment.rows} entry ${entry.sequence} records`);
        continue;
      }
      cache.set(key, rows);
    }
    events.push(...rows);
    newestSegment = rows.map((row) => row.position);
  }
  return { entries: entries.length, lastSequence: entries[entries.length - 1]?.entry.sequence ?? 0, live: live.length, events, newestSegment };
}

/** A test of the archive folder that turns true once a run is at the step aimed at (read every few ms while the load runs). */
function archiveSign(archiveDir: string, aim: Exclude<Aim, 'a seeded moment'>): () => boolean {
  const numbered = (folder: string, pattern: RegExp) => {
    try {
      return readdirSync(join(archiveDir, folder)).flatMap((name) => (pattern.test(name) ? [Number(name.slice(0, 8))] : []));
    } catch {
      // Not made yet: nothing archived so far.
      return [];
    }
  };
  const newestEntry = () => Math.max(0, ...numbered('manifest', /^\d{8}\.json$/));
  const entriesBefore = newestEntry();
  switch (aim) {
    case 'a segment being written':
      return () => numbered('segments', /^\d{8}\.parquet\.tessera-tmp$/).length > 0;
    case 'a segment written, no entry yet':
      return () => Math.max(0, ...numbered('segments', /^\d{8}\.parquet$/)) > newestEntry();
    case 'a manifest entry just written':
      return () => newestEntry() > entriesBefore;
    default: {
      const unknown: never = aim;
      throw new Error(`no sign for ${String(unknown)}`);
    }
  }
}

/** What the archiver was in the middle of when the power went, as the archive folder and the log show it. */
function archiveActivity(archiveDir: string, archive: ArchiveRead, hot: HotLog): string {
  const names = (folder: string) => (existsSync(join(archiveDir, folder)) ? readdirSync(join(archiveDir, folder)) : []);
  if ([...names('segments'), ...names('manifest')].some((name) => /\.(tessera-tmp|tmp)$/.test(name))) return 'writing a segment or a manifest entry';
  if (names('segments').some((name) => /^(\d{8})\.parquet$/.test(name) && Number(name.slice(0, 8)) > archive.lastSequence)) return 'a segment written, its manifest entry not yet';
  if (archive.lastSequence > (hot.pinnedHead ?? 0)) return 'an entry signed, its head not yet recorded in the log';
  const hotPositions = new Set(hot.events.map((event) => event.position));
  if (archive.newestSegment.some((position) => hotPositions.has(position))) return 'a segment recorded, its events not yet removed from the hot log';
  return 'between runs';
}

/** Regular files of size 0 in the data folder, apart from SQLite's -wal and -shm and temporary files. */
function emptyFilesIn(dataDir: string): string[] {
  const empty: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && statSync(path).size === 0 && !/(-wal|-shm|\.tmp|\.tessera-tmp)$/.test(entry.name)) empty.push(relative(dataDir, path));
    }
  };
  walk(dataDir);
  return empty;
}

/** A CLI command beside the data folder, its exit code kept (execFile would throw on it). */
function runCli(env: NodeJS.ProcessEnv, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [cli, ...args], { env, cwd: repositoryRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('exit', (code) => done({ code, stdout, stderr }));
  });
}

/** Files of the mount this process holds open: none may be, or unmounting would have to wait for them. */
function filesHeldOn(mountPoint: string): string[] {
  const held: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(mountPoint + sep)) held.push(target);
    } catch {
      // Closed meanwhile.
    }
  }
  return held;
}

