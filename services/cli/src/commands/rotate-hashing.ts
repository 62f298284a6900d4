import { retiredKeyUse, rotateHashingKey, type RetiredKeyUse } from '@tessera/hashing-key';
import { hashingKeyFile } from '@tessera/tokens';
import type { AdminContext } from '../admin-store.js';
import type { CommandContext } from '../command-context.js';
import { print } from '../output.js';

/**
 * `keys rotate-hashing`: a new secret-hashing key, recorded on the log; new hashes are made with it
 * from then on. The retired keys stay in the data folder, named by fingerprint, to check the hashes
 * they made; the answer says, for each, what still depends on it: credentials until they are
 * rotated (or revoked), live refresh-token families until they expire, admin tokens until revoked.
 */
export async function rotateSecretHashingKey({ config }: CommandContext, { store, hashing, now }: AdminContext, json: boolean): Promise<number> {
  const dataDir = config.TESSERA_DATA_DIR;
  const rotation = await rotateHashingKey(store, { dataDir, current: hashing.current, now });
  const retired = await retiredKeyUse(store, { state: rotation.state, dataDir, now });
  const file = hashingKeyFile(dataDir);
  print(
    json,
    {
      fingerprint: rotation.fingerprint,
      previous_fingerprint: rotation.previousFingerprint,
      file,
      retired_keys: retired.map(({ fingerprint, file: keptAs, dependents }) => ({
        fingerprint,
        file: keptAs,
        transaction_keys: dependents.transactionKeys,
        api_keys: dependents.apiKeys,
        refresh_token_families: dependents.refreshTokenFamilies,
        admin_tokens: dependents.adminTokens,
        ssf_receivers: dependents.ssfReceivers,
        ssf_push_headers: dependents.ssfPushHeaders,
      })),
    },
    [
      `New secret-hashing key ${rotation.fingerprint} is current (${file}): new hashes are made with it.`,
      'Retired keys, kept to check the hashes they made:',
      ...retired.map(describeUse),
      `Copy ${file} and the retired keys' files to every other host and region that writes to this log (or hashes with its key): ` +
        'until the new key is there, their issuers are not ready and refuse to make a hash (503).',
    ].join('\n'),
  );
  return 0;
}

function describeUse({ fingerprint, file, dependents }: RetiredKeyUse): string {
  const counts = [
    plural(dependents.transactionKeys, 'Transaction Key'),
    plural(dependents.apiKeys, 'API Key'),
    plural(dependents.refreshTokenFamilies, 'live refresh-token family', 'live refresh-token families'),
    plural(dependents.adminTokens, 'admin token'),
    plural(dependents.ssfReceivers, 'Shared Signals receiver'),
    plural(dependents.ssfPushHeaders, 'sealed push Authorization header', 'sealed push Authorization headers'),
  ];
  const total = Object.values(dependents).reduce((sum, count) => sum + count, 0);
  return total === 0
    ? `  ${fingerprint} (${file}): nothing in this log depends on it any more; delete it once no other region's log does either`
    : `  ${fingerprint} (${file}): still needed by ${counts.join(', ')} (rotate credentials with accounts rotate-key or add-legacy-key and revoke-legacy-key; families expire; admin tokens are replaced and revoked)`;
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
