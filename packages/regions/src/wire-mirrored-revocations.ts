import type { GuardedEventStore } from '@tessera/event-store';
import { epochSeconds, registerCounter, untilAvailable, type Host } from '@tessera/host';
import { MirroredRevocations } from './mirrored-revocations.js';
import type { RegionSettings } from './region-settings.js';

/**
 * Other regions' revocations and cuts, recorded in this region's log for its Shared Signals
 * receivers (docs/shared-signals.md, "Several regions"), when the process has a region and a
 * Shared Signals transmitter (`signals`); undefined without a region. Its reader joins the
 * process's follower of the log, and the mirror hands it what it follows.
 */
export function wireMirroredRevocations(host: Host, store: GuardedEventStore, settings: RegionSettings, signals: { readonly anyStream: () => boolean }): MirroredRevocations | undefined {
  const own = settings.own;
  if (own === undefined) return undefined;
  const { config } = host;
  // The transmitter's component: what is recorded here is sent by it.
  const logger = host.log.child({ component: 'ssf' });
  const mirrored = new MirroredRevocations({
    store,
    own,
    bareFamilies: settings.bareFamilies,
    clockSkewSeconds: config.TESSERA_CLOCK_SKEW,
    refreshTokenTtlSeconds: config.TESSERA_REFRESH_TOKEN_TTL,
    now: () => epochSeconds(host.clock),
    anyStream: signals.anyStream,
    caughtUp: host.readModels.caughtUp,
    untilAvailable: async (operation) => untilAvailable(store, operation),
    onRecordFailed: (error, source) => logger.warn({ err: error, region: source.region }, "could not record another region's revocation for the Shared Signals receivers"),
  });
  registerCounter(host.metrics, 'tessera_ssf_mirrored_revocations_total', "Other regions' revocations and cuts recorded in this region's log for its Shared Signals receivers", () => mirrored.recordedSinceStart);
  return mirrored;
}
