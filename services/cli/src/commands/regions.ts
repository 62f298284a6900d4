import { streams } from '@tessera/events';
import { DomainError, promoteControlRegion } from '@tessera/domain';
import { ExpectedRevisionConflict } from '@tessera/event-store';
// The settings alone: an admin command loads no HTTP server (the module's parts import the issuer's routes).
import { regionSettings } from '@tessera/regions/settings';
import { withExistingLog } from '../admin-store.js';
import { CliError } from '../cli-error.js';
import type { CommandContext } from '../command-context.js';
import { parseCommandOptions } from '../command-options.js';
import { readControlRegionFence } from '../control-region.js';
import { print } from '../output.js';

const options = {
  region: { type: 'string' },
  json: { type: 'boolean' },
} as const;

/**
 * `tessera regions promote-control --region NAME`: the control region's failover as a command
 * (docs/decisions/0018). Appends ControlRegionChanged with an epoch one above any this region has
 * seen, in its own log and the others' mirrored account topics, read up to their ends first; the
 * relay puts it on the account topic, and every region's writers of accounts follow it.
 */
export async function runRegions(command: CommandContext, argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  const { values } = parseCommandOptions(rest, options);
  if (subcommand !== 'promote-control') throw new CliError('regions needs: promote-control --region NAME');
  const regions = regionSettings(command.config);
  const own = regions?.own;
  if (own === undefined || regions?.control === undefined) throw new CliError('regions promote-control needs TESSERA_REGION and TESSERA_CONTROL_REGION (the same in every region)');
  const region = values.region;
  const known = new Set([own, regions.control, ...Object.keys(regions.peers), ...(regions.mirrored ?? [])]);
  if (region === undefined || !known.has(region)) throw new CliError(`--region must name a region this one knows: ${[...known].sort().join(', ')}`);
  return withExistingLog(
    command,
    async (store) => {
      const before = await store.readStream(streams.controlRegion());
      const fence = (await readControlRegionFence(command, store))!;
      // The highest epoch is known only once every source was read: a promotion on a guess could reuse one.
      if (fence.waitingFor.length > 0) {
        throw new DomainError('ERR_CONTROL_REGION_UNCONFIRMED', `cannot promote: not every region's account topic could be read (${fence.waitingFor.join(', ')})`);
      }
      const previous = fence.current;
      const event = promoteControlRegion(previous, { region, recordedIn: own, now: Math.floor(command.clock.now() / 1000) });
      try {
        await store.append(streams.controlRegion(), [{ event, metadata: { actor: 'cli' } }], { expectedRevision: before.at(-1)?.revision ?? 'no_stream' });
      } catch (error) {
        if (error instanceof ExpectedRevisionConflict) throw new CliError('another promotion was recorded in this region meanwhile: run the command again');
        throw error;
      }
      print(
        values.json ?? false,
        { region: event.region, epoch: event.epoch, previous_region: previous.region, previous_epoch: previous.epoch },
        `control region is now ${event.region} (epoch ${event.epoch}, was ${previous.region} at epoch ${previous.epoch}); every region refuses account writes elsewhere once it has read this`,
      );
      return 0;
    },
    { checkKey: true },
  );
}
