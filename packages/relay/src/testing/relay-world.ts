// Test support for the relay's integration tests: src/testing is left out of the build, so the compiled relay never loads it.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { streams } from '@tessera/events';
import { SqliteEventStore } from '@tessera/event-store-sqlite';
import { createKafkaFeed, silentLogger, type KafkaRevocationFeed } from '@tessera/feed';
import { tokenRevoked, tokenRotated } from '@tessera/feed/testing';
import { epochSeconds, systemClock } from '@tessera/timing';

const nowSeconds = () => epochSeconds(systemClock);

/** A fresh log, topic and checkpoint file per test, so counts in one test see no other test's events. */
export async function createRelayWorld(brokers: string) {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-relay-'));
  const store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
  const topic = `tessera.revocations.test-relay-${randomUUID()}`;
  const feeds: KafkaRevocationFeed[] = [];
  const newFeed = () => {
    const feed = createKafkaFeed({ brokers, topic, logger: silentLogger, publishRetry: { retries: 2, maxRetryTimeMs: 500 } });
    feeds.push(feed);
    return feed;
  };
  await newFeed().ensureTopic({ partitions: 3 });
  return {
    store,
    topic,
    checkpointFile: join(dir, 'relay-checkpoint.json'),
    newFeed,
    /** Rotates a family to `generation`, then (optionally) revokes it. */
    async appendFamily(familyId: string, generation: number, revoke: boolean) {
      const at = nowSeconds();
      const events = [{ event: tokenRotated(familyId, generation, at) }, ...(revoke ? [{ event: tokenRevoked(familyId, generation, at) }] : [])];
      return store.append(streams.family(familyId), events, { expectedRevision: 'any' });
    },
    async cleanup() {
      await Promise.all(feeds.map((f) => f.close()));
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
