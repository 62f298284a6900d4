/**
 * A second process for the multi-process test: appends to one shared stream under optimistic
 * concurrency (read revision, append, retry on conflict) and to a stream of its own.
 */
import { ExpectedRevisionConflict } from '@tessera/event-store';
import { SqliteEventStore } from '../index.js';

const [file, worker, countText] = process.argv.slice(2) as [string, string, string];
const count = Number(countText);
const store = new SqliteEventStore({ file });
const shared = 'account-shared';
let conflicts = 0;
for (let i = 0; i < count; i += 1) {
  await store.append(`account-${worker}`, [{ event: { type: 'PermissionsChanged', v: 1, accountId: worker, permissions: [`p${i}`], at: i } }], {
    expectedRevision: 'any',
  });
  for (;;) {
    const [last] = await store.readStream(shared, { direction: 'backwards', maxCount: 1 });
    try {
      await store.append(shared, [{ event: { type: 'PermissionsChanged', v: 1, accountId: 'shared', permissions: [`${worker}-${i}`], at: i } }], {
        expectedRevision: last ? last.revision : 'no_stream',
      });
      break;
    } catch (error) {
      if (!(error instanceof ExpectedRevisionConflict)) throw error;
      conflicts += 1;
    }
  }
}
await store.close();
process.stdout.write(JSON.stringify({ worker, conflicts }));
