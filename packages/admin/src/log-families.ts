import { readAllOf, type EventStore } from '@tessera/event-store';
import { AccountFamilies } from './account-families.js';
import type { FamiliesReadModel } from './families-thread.js';
import { longestLiveTokenLifetime } from './token-lifetimes.js';

/**
 * The families read model of a one-off command (the CLI's `accounts disable`): read from the log
 * when asked, not followed. The whole log's token events are read, since a refresh token outlives
 * the signing-key window a cut reads; a command run by hand can afford what a server would not.
 */
export function familiesFromLog(store: Pick<EventStore, 'headPosition' | 'readStream' | 'positionBefore' | 'readAll'>, nowSeconds: number): FamiliesReadModel {
  return {
    longestTokenLifetime: () => longestLiveTokenLifetime(store, nowSeconds),
    // Read after the caller's append, so the position it names is already in what is read.
    async liveFamiliesOnceAt(_position, accountId) {
      const families = new AccountFamilies(() => nowSeconds);
      for await (const page of readAllOf(store, families.types)) {
        for (const recorded of page) families.apply(recorded);
      }
      return families.liveFamilies(accountId, nowSeconds);
    },
  };
}
