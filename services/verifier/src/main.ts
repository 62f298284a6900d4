import { mirroredRegionsOf, type TesseraConfig } from '@tessera/config';
import { followInto, openGuardedStore, runHost, type RunningServer, type StartOptions } from '@tessera/server';
import { verifierRoutes, wireKafkaFedVerifier, wireLogFedVerifier } from './verifier-composition.js';
import { createVerifierParts } from './verifier-parts.js';

/**
 * `tessera verifier`: bearer-token decisions alone. Fed from the log by default; with
 * TESSERA_VERIFIER_SOURCE=kafka it opens no event store at all, which is what lets it run in
 * another region (and never load a store driver).
 */
export function runVerifier(config: TesseraConfig, options: StartOptions = {}): Promise<RunningServer> {
  return runHost(
    config,
    'verifier',
    async (host) => {
      const verifier = createVerifierParts(config);
      if (config.TESSERA_VERIFIER_SOURCE === 'kafka') {
        await wireKafkaFedVerifier(host, verifier);
      } else {
        const store = await openGuardedStore(host);
        followInto(host, store, verifier.state.readers, { name: 'read models', notReady: 'read models are catching up with the event log', positionGauge: true });
        wireLogFedVerifier(host, store, verifier);
      }
      if (mirroredRegionsOf(config).length > 0) {
        // Other regions' keys, accounts and revocations from the topics MirrorMaker 2 copies here.
        const { wireMirroredRegions } = await import('@tessera/mirror');
        wireMirroredRegions(host, { keys: verifier.state.keys, accounts: verifier.state.accounts, projection: verifier.state.projection });
        verifier.alsoConsultLocalProjection();
      }
      return { routes: [verifierRoutes(host, verifier)] };
    },
    options,
  );
}
