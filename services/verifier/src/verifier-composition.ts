import { mirroredRegionsOf } from '@tessera/config';
import { followInto, openGuardedStore, type Host } from '@tessera/host';
import type { Composition } from '@tessera/server';
import { createVerifierParts, verifierRoutes, wireKafkaFedVerifier, wireLogFedVerifier } from '@tessera/verifier';

/**
 * `tessera verifier`'s wiring: bearer-token decisions alone. Fed from the log by default; with
 * TESSERA_VERIFIER_SOURCE=kafka it opens no event store at all, which is what lets it run in
 * another region (and never load a store driver).
 */
export async function composeVerifier(host: Host): Promise<Composition> {
  const verifier = createVerifierParts(host);
  if (host.config.TESSERA_VERIFIER_SOURCE === 'kafka') {
    await wireKafkaFedVerifier(host, verifier);
  } else {
    const store = await openGuardedStore(host);
    followInto(host, store, verifier.state.readers, { name: 'read models', notReady: 'read models are catching up with the event log', readModels: true });
    wireLogFedVerifier(host, store, verifier);
  }
  if (mirroredRegionsOf(host.config).length > 0) {
    // Other regions' keys, accounts and revocations from the topics MirrorMaker 2 copies here.
    const { wireMirroredRegions } = await import('@tessera/mirror');
    wireMirroredRegions(host, { keys: verifier.state.keys, accounts: verifier.state.accounts, projection: verifier.state.projection });
    verifier.alsoConsultLocalProjection();
  }
  return { routes: [verifierRoutes(host, verifier)] };
}
