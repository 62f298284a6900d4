import { wireAdminApi } from '@tessera/admin';
import { mirroredRegionsOf, type TesseraConfig } from '@tessera/config';
import { followInto, openGuardedStore, runHost, type RunningServer, type StartOptions } from '@tessera/server';
import { wireIssuer } from './issuer-composition.js';
import { createIssuerParts } from './issuer-parts.js';

/** `tessera issuer`: the token operations and the JWKS alone, on the store TESSERA_EVENT_STORE names. */
export function runIssuer(config: TesseraConfig, options: StartOptions = {}): Promise<RunningServer> {
  return runHost(
    config,
    'issuer',
    async (host) => {
      const store = await openGuardedStore(host);
      const issuer = createIssuerParts(config, store);
      // ---- Admin API (issue 12): its routes are for the admin listener only. No verifier here; a cut dates this issuer's next tokens at once.
      const admin = wireAdminApi(host, store, { onCut: (event) => issuer.directory.apply(event) });
      const following = followInto(host, store, [...issuer.readers, ...admin.readers], { name: 'read models', notReady: 'read models are catching up with the event log', positionGauge: true });
      if (mirroredRegionsOf(config).length > 0) {
        // Other regions' public keys (for the JWKS) and the control region's credentials, through MirrorMaker 2.
        const { wireMirroredRegions } = await import('@tessera/mirror');
        wireMirroredRegions(host, { keys: issuer.keys, accounts: issuer.directory });
      }
      return { routes: [wireIssuer(host, store, issuer, following.whenCaughtUp)], adminRoutes: [admin.routes] };
    },
    options,
  );
}
