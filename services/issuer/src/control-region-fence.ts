import type { ControlRegionFence } from '@tessera/domain';
import { logReader, type LogReader } from '@tessera/event-store';
import { registerGauges, type Host } from '@tessera/host';
import type { RegionSettings } from '@tessera/regions';

export interface WiredControlRegionFence {
  readonly fence: ControlRegionFence;
  /** This region's own record of promotions, for the process's follower of the log. */
  readonly readers: readonly LogReader[];
}

/**
 * The control region's fence in a server that writes accounts (the admin API's account cut), or
 * undefined without a control region (docs/decisions/0018). Fed by the log follower (this
 * region's promotions) and the mirror followers (other regions' promotions, and when each account
 * topic has been read up to where it stood); until both have, account writes wait.
 */
export async function wireControlRegionFence(host: Host, regions: RegionSettings | undefined): Promise<WiredControlRegionFence | undefined> {
  if (regions?.control === undefined) return undefined;
  // Kafka's client comes with the mirror package: loaded only when a fence is configured.
  const { controlRegionFenceOf, localLogSource } = await import('@tessera/mirror');
  const fence = controlRegionFenceOf(host.config, regions);
  if (!fence) return undefined;
  registerGauges(host.metrics, {
    tessera_control_region_epoch: { help: 'The highest control-region epoch this process has seen (0: TESSERA_CONTROL_REGION, no promotion yet)', read: () => fence.current.epoch },
    tessera_account_writes_allowed: {
      help: 'Whether this process may write accounts now: 1 in the control region once every account topic is read, else 0',
      read: () => {
        try {
          fence.checkAccountWrite();
          return 1;
        } catch {
          return 0;
        }
      },
    },
  });
  host.readModels.onCaughtUp(() => fence.caughtUp(localLogSource));
  return { fence, readers: [logReader(['ControlRegionChanged'], ({ event }) => fence.apply(event))] };
}
