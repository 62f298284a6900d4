/**
 * `npm run bench -- power-loss`: many more power cuts than test/e2e/power-loss.test.ts makes
 * (BENCH_POWER_CUTS, 50 by default), with the same machine and the same checks
 * (test/support/power-cut-machine.ts): one `tessera start` whose whole data folder is on LazyFS,
 * with Kafka, a pushed and a polled Shared Signals stream and archiving every second, cut off at
 * seeded moments and at steps of archiving runs, on one data folder that lives through every cut.
 * It counts what was acknowledged and what was found: lost work, checkpoints past the log's head,
 * archive verification failures, and the rest; and the time each cut took.
 *
 * Not part of `npm run bench` without a part: it proves durability rather than measuring speed,
 * and needs LazyFS (infra/lazyfs/build.sh) and a usable /dev/fuse (root). Kafka: TESSERA_KAFKA_BROKERS,
 * or a broker of its own (java and mvn). TESSERA_POWER_CUT_SEED replays a run's choices.
 */
import { canRunKafkaBroker, startKafkaBroker, type KafkaBroker } from '../../infra/kafka/kafka-broker.js';
import { lazyFsBinary } from '../../infra/lazyfs/lazyfs.js';
import { warmUpKafka } from '../../packages/feed/src/testing/warm-up.js';
import { aims, describeCut, findingsOf, lazyFsMissing, noFindings, startPowerCutMachine, summariseFindings, type Aim, type CutFindings, type CutReport } from '../support/power-cut-machine.js';
import { progress } from './children.js';
import { median, type Row } from './report.js';

export interface PowerLossResult {
  readonly seed: number;
  /** Cuts asked for, and made (fewer when the server did not come back). */
  readonly cutsAsked: number;
  readonly cuts: number;
  readonly acknowledged: { readonly issue: number; readonly refresh: number; readonly revoke: number };
  /** Operations in flight when the power went: no answer, so neither side of them is expected. */
  readonly unanswered: number;
  /** Findings of every cut, by kind. */
  readonly findings: Record<keyof CutFindings, number>;
  /** The cuts that found anything, with their first findings. */
  readonly cutsWithFindings: { readonly cut: number; readonly summary: string[] }[];
  /** What the cuts were aimed at, and how many saw it. */
  readonly aims: Record<Aim, { cuts: number; met: number }>;
  /** What the archiver was doing at each cut, as the folder showed it. */
  readonly archiveAtCut: Record<string, number>;
  /** The archive after the last cut. */
  readonly archive: CutReport['archive'];
  /** Files a cut left empty (written without fsync), over every cut. */
  readonly emptyFiles: string[];
  readonly secondsPerCut: { readonly median: number; readonly max: number };
  readonly totalSeconds: number;
  /** Why the run stopped early, when it did. */
  readonly stopped: string | undefined;
}

export async function measurePowerLoss(options: { cuts: number; seed: number }): Promise<PowerLossResult> {
  const missing = lazyFsMissing();
  if (missing !== undefined) throw new Error(`power-loss needs LazyFS: ${missing}`);
  let broker: KafkaBroker | undefined;
  let brokers = process.env.TESSERA_KAFKA_BROKERS;
  if (!brokers) {
    if (!canRunKafkaBroker()) throw new Error('power-loss needs Kafka: set TESSERA_KAFKA_BROKERS, or install java and maven');
    broker = await startKafkaBroker();
    brokers = broker.bootstrap;
    await warmUpKafka(brokers);
  }
  const startedAt = Date.now();
  const machine = await startPowerCutMachine({ binary: lazyFsBinary()!, brokers, seed: options.seed, log: progress });
  const reports: CutReport[] = [];
  let stopped: string | undefined;
  try {
    for (let cut = 1; cut <= options.cuts; cut += 1) {
      const report = await machine.cut();
      reports.push(report);
      progress(describeCut(report));
      if (findingsOf(report).length > 0) progress([`cut ${report.cut} (seed ${options.seed}) FOUND:`, ...summariseFindings(report)].join('\n'));
      if (report.findings.restart.some((line) => line.startsWith('the server did not become ready again'))) {
        stopped = `the server did not come back after cut ${report.cut}`;
        break;
      }
    }
  } finally {
    const found = reports.some((report) => findingsOf(report).length > 0);
    if (found) progress(`power-loss: kept ${machine.workDir} (root/ is the disk, logs/ the server's output)`);
    await machine.close({ keep: found });
    await broker?.destroy();
  }
  // Casts: objects built from every kind of CutFindings and every aim, keyed by them.
  const findings = Object.fromEntries(Object.keys(noFindings()).map((kind) => [kind, 0])) as Record<keyof CutFindings, number>;
  for (const report of reports) for (const [kind, lines] of Object.entries(report.findings) as [keyof CutFindings, string[]][]) findings[kind] += lines.length;
  const aimCounts = Object.fromEntries(aims.map((aim) => [aim, { cuts: reports.filter((report) => report.aim.at === aim).length, met: reports.filter((report) => report.aim.at === aim && report.aim.met).length }])) as Record<Aim, { cuts: number; met: number }>;
  const archiveAtCut: Record<string, number> = {};
  for (const report of reports) archiveAtCut[report.archiveAtCut] = (archiveAtCut[report.archiveAtCut] ?? 0) + 1;
  const seconds = reports.map((report) => report.timings.totalMs / 1000);
  return {
    seed: options.seed,
    cutsAsked: options.cuts,
    cuts: reports.length,
    acknowledged: machine.ledger.totals(),
    unanswered: reports.reduce((sum, report) => sum + report.tally.unanswered.issue + report.tally.unanswered.refresh + report.tally.unanswered.revoke, 0),
    findings,
    cutsWithFindings: reports.filter((report) => findingsOf(report).length > 0).map((report) => ({ cut: report.cut, summary: summariseFindings(report) })),
    aims: aimCounts,
    archiveAtCut,
    archive: reports[reports.length - 1]?.archive ?? { entries: 0, liveSegments: 0, archivedEvents: 0 },
    emptyFiles: [...new Set(reports.flatMap((report) => report.emptyFiles))].sort(),
    secondsPerCut: { median: median(seconds), max: Math.max(0, ...seconds) },
    totalSeconds: (Date.now() - startedAt) / 1000,
    stopped,
  };
}

export function describePowerLoss(result: PowerLossResult): string {
  const { acknowledged, findings } = result;
  const total = acknowledged.issue + acknowledged.refresh + acknowledged.revoke;
  const lines = [
    `power loss: ${result.cuts} of ${result.cutsAsked} cuts on one data folder on LazyFS (seed ${result.seed}: TESSERA_POWER_CUT_SEED=${result.seed} replays it), ${result.totalSeconds.toFixed(0)} s`,
    `  acknowledged: ${total} operations (${acknowledged.issue} issuances, ${acknowledged.refresh} refreshes, ${acknowledged.revoke} revocations); ${result.unanswered} in flight when the power went (no answer)`,
    `  lost: ${findings.lost}; checkpoints past the log's head: ${findings.checkpointPastLog}; archive verify failures: ${findings.archive}; integrity: ${findings.integrity}; restart: ${findings.restart}; refused: ${findings.refused}; audit trail: ${findings.auditTrail}; undelivered: ${findings.undelivered}`,
    `  aimed at: ${Object.entries(result.aims).map(([aim, { cuts, met }]) => `${aim} ${cuts}${aim === aims[0] ? '' : ` (seen ${met})`}`).join(', ')}`,
    `  the archiver at the cut: ${Object.entries(result.archiveAtCut).map(([what, count]) => `${what} ${count}`).join(', ')}`,
    `  archive at the end: ${result.archive.entries} manifest entries, ${result.archive.liveSegments} live segments, ${result.archive.archivedEvents} events`,
    `  files a cut left empty (written without fsync): ${result.emptyFiles.join(', ') || 'none'}`,
    `  time per cut: median ${result.secondsPerCut.median.toFixed(1)} s, max ${result.secondsPerCut.max.toFixed(1)} s`,
  ];
  if (result.stopped !== undefined) lines.push(`  STOPPED: ${result.stopped}`);
  for (const { cut, summary } of result.cutsWithFindings.slice(0, 5)) lines.push(`  cut ${cut} found:`, ...summary.map((line) => `    ${line}`));
  return lines.join('\n');
}

export function powerLossRows(result: PowerLossResult): Row[] {
  const none = (what: string, count: number): Row => ({ what, tessera: count, peer: '—', ratio: '—', target: '0', met: count === 0 });
  const total = result.acknowledged.issue + result.acknowledged.refresh + result.acknowledged.revoke;
  const others = result.findings.integrity + result.findings.restart + result.findings.refused + result.findings.auditTrail + result.findings.undelivered;
  return [
    { ...none(`power cuts (${result.cuts}): acknowledged operations lost, of ${total}`, result.findings.lost), met: result.findings.lost === 0 && result.cuts === result.cutsAsked },
    none('power cuts: checkpoints past the log\'s head', result.findings.checkpointPastLog),
    none('power cuts: archive verify failures', result.findings.archive),
    none('power cuts: other findings (integrity, restart, refused, audit trail, undelivered)', others),
    { what: 'power cuts: seconds per cut (median / max)', tessera: `${result.secondsPerCut.median.toFixed(1)} / ${result.secondsPerCut.max.toFixed(1)}`, peer: '—', ratio: '—', target: '—', met: '—' },
  ];
}
