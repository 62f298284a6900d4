import { describe, expect, it } from 'vitest';
import { ManualClock, ManualScheduler } from '@tessera/timing';
import { PeerHealth } from './peer-health.js';

const peers = { a: 'https://issuer.a:8443', c: 'https://issuer.c:8443' };

describe('the failure detector on the link to other regions', () => {
  it('marks a region unreachable after the stated number of consecutive failures, and reachable again on the first success', () => {
    const changes: string[] = [];
    const health = new PeerHealth({ peers, failures: 3, probeIntervalSeconds: 1, onChange: (region, reachable) => changes.push(`${region} ${reachable ? 'up' : 'down'}`) });
    expect(health.isReachable('a')).toBe(true);
    health.failed('a', 'refused');
    health.failed('a', 'refused');
    expect(health.isReachable('a')).toBe(true);
    health.failed('a', 'refused');
    expect(health.isReachable('a')).toBe(false);
    expect(health.isReachable('c')).toBe(true);
    health.succeeded('a');
    expect(health.isReachable('a')).toBe(true);
    expect(changes).toEqual(['a down', 'a up']);
    expect(health.snapshot()).toEqual({ a: 1, c: 1 });
  });

  it('counts only consecutive failures: a success in between starts the count again', () => {
    const health = new PeerHealth({ peers, failures: 2, probeIntervalSeconds: 1 });
    health.failed('a', 'refused');
    health.succeeded('a');
    health.failed('a', 'refused');
    expect(health.isReachable('a')).toBe(true);
  });

  it('marks a region at once when an exchange waited its whole budget for nothing', () => {
    const health = new PeerHealth({ peers, failures: 3, probeIntervalSeconds: 1 });
    health.failed('a', 'timeout', { wholeBudget: true });
    expect(health.isReachable('a')).toBe(false);
    expect(health.snapshot()).toEqual({ a: 0, c: 1 });
  });

  it('probes every peer, within the probe interval as a budget: a probe not answered healthy, or not at all, is a failure', async () => {
    const answers: Record<string, () => Promise<boolean>> = {
      'https://issuer.a:8443': async () => false,
      'https://issuer.c:8443': () => new Promise<boolean>(() => undefined),
    };
    const health = new PeerHealth({
      peers,
      failures: 1,
      probeIntervalSeconds: 0.05,
      probe: (origin, signal) => Promise.race([answers[origin]!(), new Promise<boolean>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)))]),
    });
    await health.probeAll();
    expect(health.snapshot()).toEqual({ a: 0, c: 0 });
    answers['https://issuer.a:8443'] = async () => true;
    await health.probeAll();
    expect(health.isReachable('a')).toBe(true);
  });

  it('probes in the background every interval, the next probe after the last one ended, until stopped', async () => {
    const clock = new ManualClock(1_800_000_000_000);
    const scheduler = new ManualScheduler(clock);
    const probed: number[] = [];
    let healthy = false;
    const health = new PeerHealth({
      peers: { a: 'https://issuer.a:8443' },
      failures: 2,
      probeIntervalSeconds: 5,
      scheduler,
      probe: async () => {
        probed.push(clock.now());
        return healthy;
      },
    });
    const stop = health.start();
    await scheduler.advance(4_999);
    expect(probed).toHaveLength(0);
    await scheduler.advance(1);
    expect(probed).toEqual([1_800_000_005_000]);
    expect(health.isReachable('a')).toBe(true);
    await scheduler.advance(5_000);
    // Two failed probes in a row mark the region, with no request from a client.
    expect(probed).toHaveLength(2);
    expect(health.isReachable('a')).toBe(false);
    healthy = true;
    await scheduler.advance(5_000);
    expect(health.isReachable('a')).toBe(true);
    stop();
    await scheduler.advance(60_000);
    expect(probed).toHaveLength(3);
  });
});
