import type { FeedConsumer, FeedLag } from '@tessera/feed';
import { registerLabelledGauge, type Host } from '@tessera/host';

/**
 * Per mirrored region, over its topics: the events waiting in this region's Kafka, and while any
 * waits, how long ago the newest event applied from that region was recorded there (its log's
 * time), so the delay through MirrorMaker 2 and this follower. Read from the broker when scraped;
 * a topic not followed yet counts as nothing waiting (/readyz says it is missing).
 */
export function registerMirrorLag(host: Host, following: readonly { readonly region: string; readonly consumer: FeedConsumer | undefined }[]): void {
  const regions = [...new Set(following.map(({ region }) => region))];
  const lagByRegion = async () =>
    Promise.all(
      regions.map(async (region) => {
        const lags = await Promise.all(following.filter((followed) => followed.region === region && followed.consumer).map(({ consumer }) => consumer!.lag()));
        return [region, combinedLag(lags)] as const;
      }),
    );
  registerLabelledGauge(host.metrics, 'tessera_mirror_pending_events', "Events in this region's Kafka from a mirrored region's topics not applied here yet", ['region'], async () =>
    (await lagByRegion()).map(([region, lag]) => [{ region }, lag.pendingEvents] as const),
  );
  registerLabelledGauge(
    host.metrics,
    'tessera_mirror_lag_seconds',
    "While a mirrored region's events wait here: seconds since the newest event applied from that region was recorded in its log (0 when none waits)",
    ['region'],
    async () => (await lagByRegion()).map(([region, lag]) => [{ region }, lag.behindSince === undefined ? 0 : Math.max(0, host.clock.now() - lag.behindSince) / 1000] as const),
  );
}

/** A region's topics together: what waits on all of them, behind since the earliest. */
export function combinedLag(lags: readonly FeedLag[]): FeedLag {
  const behind = lags.flatMap(({ behindSince }) => (behindSince === undefined ? [] : [behindSince]));
  return { pendingEvents: lags.reduce((sum, { pendingEvents }) => sum + pendingEvents, 0), behindSince: behind.length === 0 ? undefined : Math.min(...behind) };
}
