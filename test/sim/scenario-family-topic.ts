import { percentile, type Figure } from './sim-helpers.js';
import type { Topology } from './topology.js';

/**
 * What `tessera.families` costs: every message a's relay put on it so far, read back from a's
 * broker, in bytes as they travel (key, value and the `type` header), per issuance (TokenIssued)
 * and per refresh (TokenRotated), and per revocation for comparison.
 */
export async function familyTopicVolume(topology: Topology): Promise<Figure[]> {
  const messages = await topology.topicMessages('a', 'tessera.families');
  const sizes = new Map<string, number[]>();
  for (const message of messages) {
    const type = String(message.headers.type ?? '?');
    const headers = Object.entries(message.headers).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + (value === undefined ? 0 : Buffer.byteLength(value)), 0);
    const size = (message.key?.length ?? 0) + (message.value?.length ?? 0) + headers;
    sizes.set(type, [...(sizes.get(type) ?? []), size]);
  }
  const of = (type: string) => {
    const values = sizes.get(type) ?? [];
    if (values.length === 0) return 'none seen';
    const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
    return `${mean.toFixed(0)} B mean, ${percentile(values, 50)} B p50, ${Math.max(...values)} B max (${values.length} messages)`;
  };
  return [
    { scenario: 'tessera.families volume (key + value + header)', measure: 'per issuance (TokenIssued)', value: of('TokenIssued') },
    { scenario: 'tessera.families volume (key + value + header)', measure: 'per refresh (TokenRotated)', value: of('TokenRotated') },
    { scenario: 'tessera.families volume (key + value + header)', measure: 'per revocation (TokenRevoked)', value: of('TokenRevoked') },
  ];
}
