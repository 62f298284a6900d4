import { streams, type RecordedEvent } from '@tessera/events';
import type { EventStore } from './event-store.js';

/**
 * Where a log-fed verifier starts rebuilding its revocation projection (docs/decisions/0008).
 *
 * A token this verifier can still accept is signed by a key it can still use: published, and
 * not retired or retained until after now. An issuer signs only with a key whose publication it
 * read from the log (or appended itself), and appends a token's family event before signing
 * it, so the token's generation sits after that publication in the log. Every rotation or
 * revocation that rejects the token was appended to its family stream at a later revision,
 * so it sits after the generation. Reading from just before the earliest publication of a
 * usable key therefore misses nothing that can reject a token, whatever lifetimes the issuers
 * used: no configured TTL and no clock but the keys' own retention enters it.
 */
export async function revocationRebuildAfter(
  store: Pick<EventStore, 'headPosition' | 'readStream' | 'positionBefore'>,
  nowSeconds: number,
): Promise<bigint | undefined> {
  // The head first: a key published after the key stream is read lands after it.
  const head = await store.headPosition();
  const earliest = earliestUsableKeyPublication(await store.readStream(streams.signingKeys()), nowSeconds);
  if (!earliest) return head;
  // positionBefore gives a position the adapter can start from (EventStoreDB wants a real one).
  // Only one before the key's publication is safe; an adapter that answers otherwise costs a full read.
  const before = await store.positionBefore(earliest.recordedAt);
  return before !== undefined && before < earliest.position ? before : undefined;
}

/**
 * The first publication, in log order, of a key still usable at `nowSeconds`, by the rule the
 * verifier's key set applies (retired keys stay usable while retainUntil is in the future).
 */
export function earliestUsableKeyPublication(keyEvents: readonly RecordedEvent[], nowSeconds: number): RecordedEvent | undefined {
  const published = new Map<string, { recorded: RecordedEvent; retainUntil?: number }>();
  for (const recorded of keyEvents) {
    const { event } = recorded;
    if (event.type === 'SigningKeyPublished' && !published.has(event.kid)) published.set(event.kid, { recorded });
    if (event.type === 'SigningKeyRetired') {
      const key = published.get(event.kid);
      if (key) key.retainUntil = event.retainUntil;
    }
  }
  let earliest: RecordedEvent | undefined;
  for (const { recorded, retainUntil } of published.values()) {
    if (retainUntil !== undefined && retainUntil <= nowSeconds) continue;
    if (earliest === undefined || recorded.position < earliest.position) earliest = recorded;
  }
  return earliest;
}
