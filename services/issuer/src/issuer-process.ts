import { wireAdminApi, wireAdminBootstrap, type AdminApi } from '@tessera/admin';
import { wireAudit } from '@tessera/audit';
import { mirroredRegionsOf } from '@tessera/config';
import type { GuardedEventStore } from '@tessera/event-store';
import { followInto, openGuardedStore, type Host } from '@tessera/host';
import { createIssuerParts, wireIssuer, wireSecretHashing, type IssuerParts, type SecretHashing } from '@tessera/issuer';
import { createIssuerRegionParts, issuerMirrorTargets, regionSettings, wireIssuerRegion, wireMirroredRevocations } from '@tessera/regions';
import type { Composition } from '@tessera/server';
import { wireSharedSignals, type SharedSignalsParts } from '@tessera/ssf';
import { verifierRoutes, wireLogFedVerifier, type VerifierParts } from '@tessera/verifier';
import { wireControlRegionFence } from './control-region-fence.js';

/** What differs between the processes that hold an issuer: `tessera issuer` alone, or `tessera start`. */
export interface IssuerProcessOptions {
  /**
   * A verifier in the same process (the all-in-one). The issuer then uses its account and key read
   * models rather than keeping copies, and hands it each family event and cut as soon as it is
   * durable: a token revoked here is refused here before the revoke answer is sent.
   */
  readonly verifier?: VerifierParts | undefined;
  /** The relay runs in this process too (the all-in-one with Kafka): archiving waits for its checkpoints. */
  readonly relayInProcess?: boolean | undefined;
}

/** The process's wiring, and the store it opened (for the parts a service adds, such as the relay). */
export interface IssuerProcess {
  readonly composition: Composition;
  readonly store: GuardedEventStore;
}

/**
 * The one wiring of a process that holds an issuer: the token operations and the JWKS on the
 * public listener; the admin API with the audit index's queries and the Shared Signals receivers on
 * the admin one; the Shared Signals transmitter; the control region's fence and other regions'
 * mirrored topics when configured; and, with `options.verifier`, a log-fed verifier sharing its
 * read models. `tessera issuer` runs it alone, `tessera start` with a verifier (and the relay when
 * Kafka is configured), so the two can never drift apart.
 *
 * The issuer holds the log, so in the split topology it is where the audit trail is asked for; its
 * audit index lives in its data folder, like the all-in-one's.
 */
export async function wireIssuerProcess(host: Host, options: IssuerProcessOptions = {}): Promise<IssuerProcess> {
  const { verifier } = options;
  // The region module, included when the config names a region or a peer link (docs/multi-region.md).
  const regions = regionSettings(host.config);
  const store = await openGuardedStore(host);
  const hashing = wireSecretHashing(host, store);
  // What revoke from anywhere needs, when this process has a region (docs/decisions/0018).
  const region = regions && createIssuerRegionParts(host, regions, { store, hashers: hashing.keyring, onFamilyEvent: verifier?.state.applyFamilyEvent });
  const issuer = createIssuerParts(host, store, hashing.keyring, {
    region,
    ...(verifier && { onFamilyEvent: verifier.state.applyFamilyEvent, shared: { directory: verifier.state.accounts, keys: verifier.state.keys } }),
  });
  // The audit index (audit-index.db in the data folder) follows the log in this process; its
  // queries join the admin API, behind an admin token with audit:read.
  const audit = wireAudit(host, { relayInProcess: options.relayInProcess ?? false, regionalRelay: regions?.own !== undefined });
  // Account writes (an account's cut) only in the control region, once confirmed (docs/decisions/0018).
  const control = await wireControlRegionFence(host, regions);
  // The admin API's routes are for the admin listener only. Operator revocations reach a verifier
  // in this process before the answer, as revoke-oauth-token's do; a cut also dates this issuer's next tokens.
  const admin = wireAdminApi(host, store, {
    hashers: hashing.keyring,
    onFamilyEvent: verifier?.state.applyFamilyEvent,
    onCut: verifier ? verifier.state.applyCut : (event) => issuer.directory.apply(event),
    // The directory the issuer authenticates against (the verifier's too, in the all-in-one).
    onAccountStatus: (event) => issuer.directory.apply(event),
    audit,
    checkAccountWrite: control && (() => control.fence.checkAccountWrite()),
    signingKeys: issuer.keys,
  });
  // The Shared Signals transmitter (docs/shared-signals.md): its read models join the process's
  // follower, its SETs are signed with this issuer's keys.
  const signals = wireSharedSignals(host, store, sharedSignalsParts(issuer, admin, hashing));
  // With a region, other regions' revocations are recorded in this log for this region's receivers.
  const mirroredRevocations = regions && wireMirroredRevocations(host, store, regions, signals);
  // The process's read models: what waits for them (Shared Signals' delivery, the fence, archiving,
  // the issuer's first write) waits on host.readModels, in whatever order it was wired.
  followInto(host, store, [...hashing.readers, ...issuer.readers, ...(region?.readers ?? []), ...(verifier?.state.readers ?? []), ...admin.readers, ...signals.readers, ...(mirroredRevocations ? [mirroredRevocations.reader] : []), ...(control?.readers ?? [])], {
    name: 'read models',
    notReady: 'read models are catching up with the event log',
    readModels: true,
  });
  if (verifier) wireLogFedVerifier(host, store, verifier);
  const writable = Promise.all([hashing.checked, host.readModels.caughtUp]);
  // TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE: a first admin token when the log has none (a bad file stops the start here).
  wireAdminBootstrap(host, store, { hashers: hashing.keyring, writable });
  if (mirroredRegionsOf(host.config).length > 0) {
    // Other regions' public keys (for the JWKS), the control region's credentials, their families'
    // check material, the revocations they recorded of this region's families, and their
    // promotions, copied into this region's Kafka by MirrorMaker 2 (docs/decisions/0018).
    const { wireMirroredRegions } = await import('@tessera/mirror');
    wireMirroredRegions(host, {
      keys: issuer.keys,
      accounts: issuer.directory,
      ...(verifier ? { projection: verifier.state.projection } : {}),
      ...issuerMirrorTargets(host, store, region, writable, verifier?.state.applyFamilyEvent),
      ...(control ? { control: control.fence } : {}),
      ...(mirroredRevocations ? { signals: mirroredRevocations } : {}),
    });
  }
  // The link to other regions' issuers: forwarding to a family's home region, forwarded requests accepted.
  const link = regions && wireIssuerRegion(host, regions, region);
  const routes = [wireIssuer(host, store, issuer, writable, link), ...(verifier ? [verifierRoutes(host, verifier)] : []), signals.routes];
  return { composition: { routes, adminRoutes: [admin.routes, signals.adminRoutes] }, store };
}

/** What the Shared Signals transmitter needs of an issuer process: its keyring, the secret-hashing keys, and the admin API's guard for the receivers' routes. */
export function sharedSignalsParts(issuer: Pick<IssuerParts, 'keyring'>, admin: Pick<AdminApi, 'guard'>, hashing: Pick<SecretHashing, 'keyring'>): SharedSignalsParts {
  return {
    keyring: issuer.keyring,
    hashers: hashing.keyring,
    requireScope: (scope) => admin.guard.requireScope(scope),
    // The guard ran first (onRequest), so the admin token is known on every request it let through.
    adminTokenIdOf: (request) => request.adminToken?.id ?? 'unknown',
  };
}
