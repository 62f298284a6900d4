/**
 * One archiving run in a process of its own, killed with SIGKILL as the step named in argv[4]
 * ends (or run to its end with `none`): what kill -9 at that moment leaves on disk is what the
 * crash test then checks. argv: log file, data folder, now (epoch ms), step.
 */
import { join } from 'node:path';
import { Archiver, archiveTrustIn, type ArchiverStep } from '@tessera/archiving';
import { SqliteEventStore, SqliteLogRetention } from '@tessera/event-store-sqlite';
import { AuditIndex } from '../audit-index.js';

const [log, folder, now, killAt] = process.argv.slice(2);
if (log === undefined || folder === undefined || now === undefined || killAt === undefined) throw new Error('usage: archive-run-child LOG FOLDER NOW STEP');
const store = new SqliteEventStore({ file: log, readOnly: true });
const index = AuditIndex.open(join(folder, 'audit-index.db'));
const retention = new SqliteLogRetention(log);
let writer: SqliteEventStore | undefined;
const archiver = new Archiver({
  store,
  retention,
  index,
  archiveDir: join(folder, 'archive'),
  keysDir: join(folder, 'keys'),
  settings: { hotWindowSeconds: 14 * 86_400, clockSkewSeconds: 60, auditRetentionSeconds: 400 * 86_400, maxEventsPerRun: 500 },
  consumersPast: () => index.position(),
  trust: archiveTrustIn(store, async () => (writer ??= new SqliteEventStore({ file: log }))),
  onStep: (step: ArchiverStep) => {
    if (step === killAt) process.kill(process.pid, 'SIGKILL');
  },
});
const result = await archiver.run(Number(now));
process.stdout.write(`${JSON.stringify({ archived: result.archived, finished: result.finished })}\n`);
index.close();
await retention.close();
await writer?.close();
await store.close();
