import { describe, expect, it } from 'vitest';
import { BACKWARDS, END, FORWARDS, START, type AllStreamResolvedEvent } from '@eventstore/db-client';
import { KnownHead, walkAll, type ReadAllPage } from './esdb-paging.js';
import { allRecord, readLog, type PageRequest } from './testing/esdb-fakes.js';

const positions = (records: readonly AllStreamResolvedEvent[]) => records.map((r) => r.event!.position.commit);
const log = Array.from({ length: 50 }, (_, i) => allRecord(BigInt((i + 1) * 10)));

function reader(backwardsInclusive = false) {
  const requests: PageRequest[] = [];
  const readPage: ReadAllPage = async (request) => {
    requests.push(request);
    return readLog(log, request, backwardsInclusive);
  };
  return { readPage, requests };
}

describe('walking $all in bounded reads', () => {
  it('visits every record once, forwards, with every read bounded and growing to the largest page', async () => {
    const { readPage, requests } = reader();
    const seen: AllStreamResolvedEvent[] = [];
    const end = await walkAll(readPage, { direction: FORWARDS, from: START, firstPage: 4, maxPage: 16 }, (r) => (seen.push(r), true));
    expect(end).toBe('end');
    expect(positions(seen)).toEqual(positions(log));
    expect(requests.map((r) => r.maxCount)).toEqual([4, 8, 16, 16, 16]);
  });

  it.each([false, true])('visits every record once backwards, whether a read includes its start or not (inclusive: %s)', async (inclusive) => {
    const { readPage, requests } = reader(inclusive);
    const seen: AllStreamResolvedEvent[] = [];
    const end = await walkAll(readPage, { direction: BACKWARDS, from: END, firstPage: 3, maxPage: 8 }, (r) => (seen.push(r), true));
    expect(end).toBe('end');
    expect(positions(seen)).toEqual(positions(log).reverse());
    expect(requests.every((r) => r.maxCount <= 8)).toBe(true);
  });

  it('starts forwards at a position the read includes, and the caller sees it once', async () => {
    const { readPage } = reader();
    const seen: AllStreamResolvedEvent[] = [];
    await walkAll(readPage, { direction: FORWARDS, from: { commit: 250n, prepare: 250n }, firstPage: 2, maxPage: 4 }, (r) => (seen.push(r), true));
    expect(positions(seen)).toEqual(positions(log).filter((p) => p >= 250n));
  });

  it('stops reading as soon as the visitor has its answer', async () => {
    const { readPage, requests } = reader();
    const end = await walkAll(readPage, { direction: BACKWARDS, from: END, firstPage: 4, maxPage: 64 }, (r) => r.event!.position.commit > 470n);
    expect(end).toBe('stopped');
    expect(requests).toHaveLength(1);
  });

  it('gives up after the scan limit, and says so', async () => {
    const { readPage } = reader();
    let visited = 0;
    const end = await walkAll(readPage, { direction: BACKWARDS, from: END, firstPage: 4, maxPage: 8, scanLimit: 10 }, () => (visited++, true));
    expect(end).toBe('limit');
    expect(visited).toBe(10);
  });

  it('ends on an empty log', async () => {
    const readPage: ReadAllPage = async () => [];
    expect(await walkAll(readPage, { direction: BACKWARDS, from: END, firstPage: 4, maxPage: 8 }, () => true)).toBe('end');
  });
});

describe('the head this process knows', () => {
  it('only moves forwards', () => {
    const head = new KnownHead();
    expect(head.get()).toBeUndefined();
    head.learn(undefined);
    head.learn(20n);
    head.learn(10n);
    expect(head.get()).toBe(20n);
    head.learn(30n);
    expect(head.get()).toBe(30n);
  });

  it('lets a walk from the end stop at the newest record already looked at, keeping the head', () => {
    const head = new KnownHead();
    expect(head.floor()).toBeUndefined();
    head.checked(50n);
    expect(head.floor()).toBe(50n);
    expect(head.get()).toBeUndefined();
    head.learn(20n);
    expect(head.floor()).toBe(50n);
    head.checked(40n);
    expect(head.floor()).toBe(50n);
    head.learn(60n);
    expect([head.get(), head.floor()]).toEqual([60n, 60n]);
  });
});
