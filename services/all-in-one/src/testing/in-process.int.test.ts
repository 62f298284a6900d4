import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ssfStreams } from '@tessera/events';
import { startInProcess, type InProcessAllInOne } from './in-process.js';

let tessera: InProcessAllInOne;
beforeAll(async () => {
  tessera = await startInProcess();
});
afterAll(async () => {
  await tessera.close();
});

describe('the in-process all-in-one that integration tests drive', () => {
  it('is caught up when the newest events are the delivery lease\'s, which no read model follows', async () => {
    await tessera.caughtUp();
    await tessera.store.append(ssfStreams.delivery(), [{ event: { type: 'SsfDeliveryLeaseReleased', v: 1, replica: 'a-replica-of-the-test', epoch: 1, at: 1_700_000_000 } }], { expectedRevision: 'any' });
    // Within a few seconds, not the helper's two minutes (the test's own 30 s timeout) waiting for a position no read model reports.
    const outcome = await Promise.race([tessera.caughtUp().then(() => 'caught up'), new Promise((resolve) => setTimeout(resolve, 5_000, 'still waiting'))]);
    expect(outcome).toBe('caught up');
  });
});
