import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';

/**
 * docs/operations.md's metrics table and what /metrics exposes are the same list: every family a
 * process serves is documented, and every documented name is served. The process runs with
 * everything that registers metrics: the relay (Kafka), a region (the account and family relays,
 * the check material), a mirrored region (the mirror followers), a peer region (the failure
 * detector) and a control region (its fence), so no family is missing for want of a setting; a
 * Kafka-fed verifier beside it serves the families only it has.
 */
const { brokers } = kafkaTestEnvironment('metrics table against /metrics');
const table = readFileSync(join(resolve(import.meta.dirname, '..', '..'), 'docs', 'operations.md'), 'utf8');

/** The metric names the table's first column lists; `tessera_process_*` and the like are prefixes. */
function documented(): { names: Set<string>; prefixes: string[] } {
  const section = table.slice(table.indexOf('## Metrics'), table.indexOf('\n## ', table.indexOf('## Metrics') + 1));
  const names = new Set<string>();
  const prefixes: string[] = [];
  for (const row of section.split('\n').filter((line) => line.startsWith('| `tessera_'))) {
    const firstColumn = row.split('|')[1] ?? '';
    for (const [, name] of firstColumn.matchAll(/`(tessera_[a-z0-9_*]+)/g)) {
      if (name!.endsWith('*')) prefixes.push(name!.slice(0, -1));
      else names.add(name!);
    }
  }
  return { names, prefixes };
}

describe.skipIf(!brokers)('the metrics table in docs/operations.md', () => {
  let tessera: TesseraProcess;
  let kafkaFedVerifier: TesseraProcess;
  beforeAll(async () => {
    const topic = `tessera.revocations.metrics-doc.${process.pid}`;
    tessera = await startTessera(
      {
        TESSERA_KAFKA_BROKERS: brokers!,
        TESSERA_KAFKA_TOPIC: topic,
        TESSERA_KAFKA_ACCOUNT_TOPIC: `${topic}.accounts`,
        TESSERA_KAFKA_FAMILY_TOPIC: `${topic}.families`,
        TESSERA_REGION: 'a',
        TESSERA_MIRRORED_REGIONS: 'b',
        // A peer (the failure detector's gauge) and a control region (the fence's), neither ever reached here.
        TESSERA_PEER_REGIONS: 'b=https://127.0.0.1:1',
        TESSERA_PEER_SECRET: 's'.repeat(40),
        TESSERA_CONTROL_REGION: 'a',
      },
      // The mirrored topic of region b does not exist: the process answers /metrics without being ready.
      { until: 'listening' },
    );
    kafkaFedVerifier = await startTessera({ TESSERA_VERIFIER_SOURCE: 'kafka', TESSERA_KAFKA_BROKERS: brokers!, TESSERA_KAFKA_TOPIC: `${topic}.verifier` }, { command: 'verifier', until: 'listening' });
  });
  afterAll(async () => {
    await Promise.all([tessera?.stop(), kafkaFedVerifier?.stop()]);
  });

  it('lists every family /metrics exposes, and exposes every name it lists', async () => {
    const families = async (process: TesseraProcess) => [...(await process.adminRequest('/metrics')).text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]!);
    const exposed = new Set([...(await families(tessera)), ...(await families(kafkaFedVerifier))]);
    const { names, prefixes } = documented();
    expect(names.size).toBeGreaterThan(15);
    const undocumented = [...exposed].filter((name) => !names.has(name) && !prefixes.some((prefix) => name.startsWith(prefix)));
    const notServed = [...names].filter((name) => !exposed.has(name));
    expect({ undocumented, notServed }).toEqual({ undocumented: [], notServed: [] });
  });
});
