import { streams, type SigningKeyEvent } from '@tessera/contracts';
import type { TesseraConfig } from '@tessera/config';
import { createSigningKey } from '@tessera/issuer/keys';
import { withAdminContext } from '../admin-store.js';
import { CliError } from '../cli-error.js';
import { parseCommandOptions } from '../command-options.js';
import { print } from '../output.js';

/**
 * `keys rotate`: publish a new signing key and retire the active keys whose private half is in
 * this key folder (TESSERA_KEYS_DIR), plus any named with `--kid`. Keys of issuers with their
 * own folders are left alone unless named: retiring them makes each of those issuers publish a
 * replacement. A retired key stays in the JWKS until every token it signed has expired (longest
 * lifetime + clock skew).
 */
export async function runKeys(config: TesseraConfig, argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  if (subcommand !== 'rotate') throw new CliError('keys needs: rotate');
  const { values } = parseCommandOptions(rest, { json: { type: 'boolean' }, kid: { type: 'string', multiple: true } });
  return withAdminContext(config, async ({ store, folder, now }) => {
    const history = await store.readStream(streams.signingKeys());
    const retiredBefore = new Set(history.flatMap(({ event }) => (event.type === 'SigningKeyRetired' ? [event.kid] : [])));
    const active = history.flatMap(({ event }) => (event.type === 'SigningKeyPublished' && !retiredBefore.has(event.kid) ? [event.kid] : []));
    const named = values.kid ?? [];
    const unknown = named.filter((kid) => !active.includes(kid));
    if (unknown.length > 0) throw new CliError(`no active signing key ${unknown.join(', ')}`);
    const retiring = active.filter((kid) => folder.holds(kid) || named.includes(kid));
    const published = await createSigningKey(folder, now);
    const longestLifetime = Math.max(config.TESSERA_ACCESS_TOKEN_TTL, config.TESSERA_LEGACY_TOKEN_TTL);
    const retainUntil = now + longestLifetime + config.TESSERA_CLOCK_SKEW;
    const retirements: SigningKeyEvent[] = retiring.map((kid) => ({ type: 'SigningKeyRetired', v: 1, kid, at: now, retainUntil }));
    // Published first: an issuer sharing this folder switches to the new key before it loses the old one.
    await store.append(streams.signingKeys(), [published, ...retirements].map((event) => ({ event, metadata: { actor: 'cli' } })), {
      expectedRevision: history.length === 0 ? 'no_stream' : history[history.length - 1]!.revision,
    });
    const result = { kid: published.kid, retired: retiring, retained_until: new Date(retainUntil * 1000).toISOString() };
    print(
      values.json ?? false,
      result,
      `New signing key ${published.kid} is current.${retiring.length ? ` Retired ${retiring.join(', ')}; they stay in the JWKS until ${result.retained_until}.` : ''}`,
    );
    return 0;
  });
}
