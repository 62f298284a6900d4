import { describe, expect, it } from 'vitest';
import { combinedLag } from './mirror-lag.js';

describe('a mirrored region\'s lag over its topics', () => {
  it('counts what waits on all of them, behind since the earliest of those that wait', () => {
    expect(
      combinedLag([
        { pendingEvents: 3, behindSince: 5000 },
        { pendingEvents: 0, behindSince: undefined },
        { pendingEvents: 2, behindSince: 2000 },
      ]),
    ).toEqual({ pendingEvents: 5, behindSince: 2000 });
  });

  it('is nothing waiting, and behind since nothing, when no topic waits or none is followed yet', () => {
    expect(combinedLag([{ pendingEvents: 0, behindSince: undefined }])).toEqual({ pendingEvents: 0, behindSince: undefined });
    expect(combinedLag([])).toEqual({ pendingEvents: 0, behindSince: undefined });
  });
});
