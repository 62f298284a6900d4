import { streams, type SigningKeyEvent } from '@tessera/contracts';
import type { TesseraConfig } from '@tessera/config';
import { createSigningKey } from '@tessera/issuer';
import { withAdminContext } from '../admin-store.js';
import { CliError } from '../cli-error.js';
import { parseCommandOptions } from '../command-options.js';
import { print } from '../output.js';

/**
 * `keys rotate`: publish a new signing key and retire the current ones. A retired key stays
 * in the JWKS until every token it signed has expired (longest lifetime + clock skew).
 */
export async function runKeys(config: TesseraConfig, argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  if (subcommand !== 'rotate') throw new CliError('keys needs: rotate');
  const { values } = parseCommandOptions(rest, { json: { type: 'boolean' } });
  return withAdminContext(config, async ({ store, folder, now }) => {
    const history = await store.readStream(streams.signingKeys());
    const retired = new Set(history.flatMap(({ event }) => (event.type === 'SigningKeyRetired' ? [event.kid] : [])));
    const active = history.flatMap(({ event }) => (event.type === 'SigningKeyPublished' && !retired.has(event.kid) ? [event.kid] : []));
    const published = await createSigningKey(folder, now);
    const longestLifetime = Math.max(config.TESSERA_ACCESS_TOKEN_TTL, config.TESSERA_LEGACY_TOKEN_TTL);
    const retainUntil = now + longestLifetime + config.TESSERA_CLOCK_SKEW;
    const retirements: SigningKeyEvent[] = active.map((kid) => ({ type: 'SigningKeyRetired', v: 1, kid, at: now, retainUntil }));
    await store.append(streams.signingKeys(), [published, ...retirements].map((event) => ({ event, metadata: { actor: 'cli' } })), {
      expectedRevision: history.length === 0 ? 'no_stream' : history[history.length - 1]!.revision,
    });
    const result = { kid: published.kid, retired: active, retained_until: new Date(retainUntil * 1000).toISOString() };
    print(
      values.json ?? false,
      result,
      `New signing key ${published.kid} is current.${active.length ? ` Retired ${active.join(', ')}; they stay in the JWKS until ${result.retained_until}.` : ''}`,
    );
    return 0;
  });
}
