import { revocationFeedContract } from './revocation-feed-contract.js';
import { createInProcessFeed } from './in-process-feed.js';

revocationFeedContract('in-process', async () => {
  const feed = createInProcessFeed();
  return { feed, teardown: () => feed.close() };
});
