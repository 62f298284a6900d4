import type { ControlRegionFence } from '@tessera/domain';
import type { EventStore } from '@tessera/event-store';
// The settings alone: an admin command loads no HTTP server (the module's parts import the issuer's routes).
import { regionSettings } from '@tessera/regions/settings';
import type { CommandContext } from './command-context.js';

/**
 * The control region's fence as a command-line writer checks it (docs/decisions/0018): this
 * region's record of promotions from the log, and each other region's mirrored account topic read
 * up to its end, as a server that just started would. Undefined without a control region.
 */
export async function readControlRegionFence(command: CommandContext, store: Pick<EventStore, 'readStream'>): Promise<ControlRegionFence | undefined> {
  const regions = regionSettings(command.config);
  if (regions?.control === undefined) return undefined;
  // Kafka's client comes with the mirror package: loaded only when a fence is configured.
  const { controlRegionFenceOf, readControlRegion } = await import('@tessera/mirror');
  const fence = controlRegionFenceOf(command.config, regions);
  if (!fence) return undefined;
  await readControlRegion(command.config, fence, store);
  return fence;
}

/** Before an account write: throws ERR_NOT_CONTROL_REGION (naming it) or ERR_CONTROL_REGION_UNCONFIRMED unless this region may write accounts. */
export async function checkAccountWrite(command: CommandContext, store: Pick<EventStore, 'readStream'>): Promise<void> {
  (await readControlRegionFence(command, store))?.checkAccountWrite();
}
