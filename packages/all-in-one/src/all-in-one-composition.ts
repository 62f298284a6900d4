import { wireAdminApi } from '@tessera/admin';
import { wireAudit } from '@tessera/audit';
import { mirroredRegionsOf } from '@tessera/config';
import { followInto, openGuardedStore, type Host } from '@tessera/host';
import { createIssuerParts, issuerMirrorTargets, sharedSignalsParts, wireControlRegionFence, wireIssuer, wireSecretHashing } from '@tessera/issuer';
import type { Composition } from '@tessera/server';
import { wireSharedSignals } from '@tessera/ssf';
import { createVerifierParts, verifierRoutes, wireLogFedVerifier } from '@tessera/verifier';

/**
 * `tessera start`'s wiring, the embedded default: an issuer and a verifier in one process on one
 * store, the admin API with the audit index, plus the relay when TESSERA_KAFKA_BROKERS is set. The
 * issuer uses the verifier's account and key read models rather than keeping its own copies, and
 * hands it each family event as soon as it is durable: a token revoked here is refused here
 * before the revoke answer is sent.
 */
export async function composeAllInOne(host: Host): Promise<Composition> {
  const { config } = host;
  const store = await openGuardedStore(host);
  const hashing = wireSecretHashing(host, store);
  const verifier = createVerifierParts(host);
  const issuer = createIssuerParts(host, store, hashing.keyring, {
    onFamilyEvent: verifier.state.applyFamilyEvent,
    shared: { directory: verifier.state.accounts, keys: verifier.state.keys },
  });
  // The audit index (audit-index.db in the data folder) follows the log in this process; its
  // queries join the admin API, behind an admin token with audit:read.
  // With Kafka this process also runs the relay: archiving waits for its checkpoints.
  const audit = wireAudit(host, { relayInProcess: config.TESSERA_KAFKA_BROKERS !== undefined });
  // The admin API's routes are for the admin listener only. Operator revocations reach this
  // process's verifier before the answer, as revoke-oauth-token's do; a cut also dates this issuer's next tokens.
  // Account writes (an account's cut) only in the control region, once confirmed (docs/decisions/0018).
  const control = await wireControlRegionFence(host);
  const admin = wireAdminApi(host, store, {
    hashers: hashing.keyring,
    onFamilyEvent: verifier.state.applyFamilyEvent,
    onCut: verifier.state.applyCut,
    audit,
    checkAccountWrite: control && (() => control.fence.checkAccountWrite()),
  });
  // The Shared Signals transmitter (docs/shared-signals.md): SETs for receivers that follow neither Kafka nor the log.
  const signals = wireSharedSignals(host, store, sharedSignalsParts(issuer, admin, hashing));
  const following = followInto(host, store, [...hashing.readers, ...issuer.readers, ...verifier.state.readers, ...admin.readers, ...signals.readers, ...(control?.readers ?? [])], {
    name: 'read models',
    notReady: 'read models are catching up with the event log',
    positionGauge: true,
  });
  signals.deliverOnceCaughtUp(following.whenCaughtUp);
  // Archiving removes nothing this process's read models have not applied (docs/decisions/0017).
  audit.holdArchivingFor(following);
  if (control) void following.whenCaughtUp.then(control.logCaughtUp, () => undefined);
  wireLogFedVerifier(host, store, verifier);
  const writable = Promise.all([hashing.checked, following.whenCaughtUp]);
  if (mirroredRegionsOf(config).length > 0) {
    // Other regions' keys, accounts and revocations, copied into this region's Kafka by MirrorMaker 2;
    // the issuer shares these read models, so it also authenticates the control region's credentials.
    // Their families' check material, and their revocations of this region's families (docs/decisions/0018).
    const { wireMirroredRegions } = await import('@tessera/mirror');
    wireMirroredRegions(host, {
      keys: verifier.state.keys,
      accounts: verifier.state.accounts,
      projection: verifier.state.projection,
      ...issuerMirrorTargets(host, store, issuer, writable, verifier.state.applyFamilyEvent),
      ...(control ? { control: control.fence } : {}), ...(signals.mirrored ? { signals: signals.mirrored } : {}),
    });
  }
  const routes = [wireIssuer(host, store, issuer, writable), verifierRoutes(host, verifier), signals.routes];
  if (config.TESSERA_KAFKA_BROKERS) {
    // Kafka's client is loaded only when it is configured.
    const { wireRelay } = await import('@tessera/relay');
    await wireRelay(host, store);
  }
  return { routes, adminRoutes: [admin.routes, signals.adminRoutes] };
}
