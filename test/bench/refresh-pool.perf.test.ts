import { describe, expect, it } from 'vitest';
import { RefreshPool } from './refresh-pool.js';

describe('the bench refresh pool', () => {
  it('uses every pre-issued token once, then the returned ones oldest first, each once', () => {
    const pool = new RefreshPool(['p1', 'p2']);
    const used = [pool.next(), pool.next()];
    pool.keep('r1');
    pool.keep('r2');
    used.push(pool.next());
    pool.keep('r3');
    used.push(pool.next(), pool.next());
    expect(used.sort()).toEqual(['p1', 'p2', 'r1', 'r2', 'r3']);
    expect(pool.recycled).toBe(3);
    expect(pool.next()).toBe('tsr_exhausted');
    expect(pool.exhausted).toBe(1);
  });

  it('hands out the returned tokens in the order they came back', () => {
    const pool = new RefreshPool([]);
    for (const token of ['r1', 'r2', 'r3']) pool.keep(token);
    expect([pool.next(), pool.next(), pool.next()]).toEqual(['r1', 'r2', 'r3']);
  });

  it('carries over what is left of the pre-issued first, then the returned ones not used yet, oldest first', () => {
    const pool = new RefreshPool(['p1', 'p2', 'p3']);
    pool.next();
    for (const token of ['r1', 'r2', 'r3']) pool.keep(token);
    const next = pool.carryOver();
    expect(Array.from({ length: 5 }, () => next.next())).toEqual(['p2', 'p1', 'r1', 'r2', 'r3']);
    expect(next.next()).toBe('tsr_exhausted');
  });

  it('keeps the order across the compaction of used tokens', () => {
    const pool = new RefreshPool([]);
    const count = 70_000;
    for (let i = 0; i < count; i += 1) pool.keep(`r${i}`);
    for (let i = 0; i < count; i += 1) expect(pool.next()).toBe(`r${i}`);
    expect(pool.next()).toBe('tsr_exhausted');
  });
});
