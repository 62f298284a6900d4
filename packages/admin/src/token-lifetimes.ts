import { readAllOf, revocationRebuildAfter, type EventStore } from '@tessera/event-store';
import { tokenIssuingTypes, tokenLifetimeOf } from './account-families.js';

/**
 * The longest lifetime (exp − iat, seconds) among the access tokens that can still be accepted, read
 * from the log: what a cut made by the CLI must outlive (docs/decisions/0011), never a configured TTL.
 *
 * A token a verifier can still accept is signed by a key still usable, and its issuer appended the
 * token's event after reading that key's publication; so every such token's event lies after the
 * earliest usable key's publication, where the revocation rebuild starts (docs/decisions/0008). The
 * read is as long as that window: every token event since the oldest usable signing key.
 *
 * Exported on its own (`@tessera/admin/token-lifetimes`): the CLI calls it, and an admin command
 * loads no HTTP server.
 */
export async function longestLiveTokenLifetime(
  store: Pick<EventStore, 'headPosition' | 'readStream' | 'positionBefore' | 'readAll'>,
  nowSeconds: number,
): Promise<number> {
  let longest = 0;
  const after = await revocationRebuildAfter(store, nowSeconds);
  for await (const page of readAllOf(store, tokenIssuingTypes, { after })) {
    for (const { event } of page) longest = Math.max(longest, tokenLifetimeOf(event));
  }
  return longest;
}
