import { accountEventTypes, adminTokenEventTypes, familyEventTypes, ssfReceiverEventTypes, ssfStreamEventTypes } from '@tessera/events';
import { HashingKeyUse, noDependents, type HashingKeyDependents, type SecretHashingKeyState } from '@tessera/domain';
import { readAllOf, type EventStore } from '@tessera/event-store';
import { retiredHashingKeyFile } from '@tessera/tokens';

export interface RetiredKeyUse {
  readonly fingerprint: string;
  /** Where this data folder keeps it. */
  readonly file: string;
  readonly dependents: HashingKeyDependents;
}

/**
 * What still depends on each retired key of the log at `now` (epoch seconds): the hashes that can
 * still be presented and were made with it. A retired key nothing depends on may be deleted.
 */
export async function retiredKeyUse(store: Pick<EventStore, 'readAll'>, options: { readonly state: Extract<SecretHashingKeyState, { status: 'recorded' }>; readonly dataDir: string; readonly now: number }): Promise<RetiredKeyUse[]> {
  const use = new HashingKeyUse();
  for await (const page of readAllOf(store, [...accountEventTypes, ...familyEventTypes, ...adminTokenEventTypes, ...ssfReceiverEventTypes, ...ssfStreamEventTypes])) {
    for (const { event } of page) use.apply(event);
  }
  const dependents = use.dependents(options.now, options.state.original);
  return options.state.retired.map((fingerprint) => ({
    fingerprint,
    file: retiredHashingKeyFile(options.dataDir, fingerprint),
    dependents: dependents.get(fingerprint) ?? noDependents,
  }));
}
