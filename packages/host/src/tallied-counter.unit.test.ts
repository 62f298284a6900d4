import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { talliedCounter } from './tallied-counter.js';

describe('talliedCounter', () => {
  it('reports what its tallies counted at each scrape, added to what inc() counted, without counting anything twice', async () => {
    const registry = new Registry();
    const counter = talliedCounter(registry, 'demo_answers_total', 'answers by route and class', ['route', 'status_class']);
    const ok = counter.tally('/v5/charge', '2xx');
    for (let i = 0; i < 3; i += 1) ok.inc();
    counter.tally('/v5/charge', '4xx').inc();
    counter.inc({ route: '/v5/charge', status_class: '2xx' });
    const first = await registry.metrics();
    expect(first).toContain('demo_answers_total{route="/v5/charge",status_class="2xx"} 4');
    expect(first).toContain('demo_answers_total{route="/v5/charge",status_class="4xx"} 1');
    ok.inc();
    expect(await registry.metrics()).toContain('demo_answers_total{route="/v5/charge",status_class="2xx"} 5');
    expect((await counter.get()).values.find((v) => v.labels.status_class === '4xx')?.value).toBe(1);
  });

  it('gives the same tally for the same label values, and a single-label counter its own per value', async () => {
    const registry = new Registry();
    const counter = talliedCounter(registry, 'demo_outcomes_total', 'outcomes', ['outcome']);
    expect(counter.tally('allowed')).toBe(counter.tally('allowed'));
    counter.tally('allowed').inc();
    counter.tally('forbidden').inc();
    counter.tally('allowed').inc();
    const text = await registry.metrics();
    expect(text).toContain('demo_outcomes_total{outcome="allowed"} 2');
    expect(text).toContain('demo_outcomes_total{outcome="forbidden"} 1');
  });
});
