import { describe, expect, it } from 'vitest';
import type { SsfStreamConfiguration, SsfStreamEvent } from '@tessera/events';
import { decideStream, evolveStream, initialStreamState, maxSubjectsPerStream, snapshotEvery, snapshotReadBack, startsStreamFold, type StreamCommand } from './stream-decider.js';

const configuration: SsfStreamConfiguration = { delivery: { method: 'poll' }, eventsRequested: [], eventsDelivered: [] };
const create: StreamCommand = { type: 'CreateStream', streamId: 's1', receiverId: 'r1', configuration, now: 100 };
const run = (history: readonly SsfStreamEvent[], command: StreamCommand) => decideStream(command, history.reduce(evolveStream, initialStreamState()));
const created = run([], create);
const account = { kind: 'account', accountId: 'a1' } as const;

describe('the stream decider', () => {
  it('creates a stream owned by its receiver', () => {
    expect(created).toEqual([{ type: 'SsfStreamCreated', v: 1, streamId: 's1', receiverId: 'r1', configuration, at: 100 }]);
  });

  it("refuses every command on another receiver's stream, a deleted one, or none, as not found", () => {
    const deleted = [...created, ...run(created, { type: 'DeleteStream', receiverId: 'r1', now: 101 })];
    for (const [history, receiverId] of [[created, 'r2'], [deleted, 'r1'], [[], 'r1']] as const) {
      for (const command of [
        { type: 'UpdateStream', receiverId, configuration, now: 1 },
        { type: 'SetStreamStatus', receiverId, streamStatus: 'paused', by: 'receiver', now: 1 },
        { type: 'AddSubject', receiverId, subject: account, now: 1 },
        { type: 'RemoveSubject', receiverId, subject: account, now: 1 },
        { type: 'DeleteStream', receiverId, now: 1 },
        { type: 'RequestVerification', receiverId, now: 1, minIntervalSeconds: 10 },
      ] as StreamCommand[]) {
        expect(() => run(history, command)).toThrow(expect.objectContaining({ code: 'ERR_SSF_STREAM_NOT_FOUND' }));
      }
    }
  });

  it('refuses a verification sooner than the minimum interval after the last, saying how long to wait', () => {
    const first = run(created, { type: 'RequestVerification', receiverId: 'r1', now: 200, minIntervalSeconds: 10 });
    expect(first).toEqual([{ type: 'SsfVerificationRequested', v: 1, streamId: 's1', receiverId: 'r1', at: 200 }]);
    expect(() => run([...created, ...first], { type: 'RequestVerification', receiverId: 'r1', now: 203, minIntervalSeconds: 10 })).toThrow(expect.objectContaining({ code: 'ERR_SSF_VERIFICATION_TOO_SOON', retryAfterSeconds: 7 }));
    expect(run([...created, ...first], { type: 'RequestVerification', receiverId: 'r1', now: 210, minIntervalSeconds: 10 })).toHaveLength(1);
  });

  it('adds a subject once and removes it once: repeating either appends nothing', () => {
    const added = run(created, { type: 'AddSubject', receiverId: 'r1', subject: account, now: 101 });
    expect(added).toEqual([{ type: 'SsfSubjectAdded', v: 1, streamId: 's1', receiverId: 'r1', subject: account, at: 101 }]);
    expect(run([...created, ...added], { type: 'AddSubject', receiverId: 'r1', subject: account, now: 102 })).toEqual([]);
    const removed = run([...created, ...added], { type: 'RemoveSubject', receiverId: 'r1', subject: account, now: 103 });
    expect(removed).toHaveLength(1);
    expect(run([...created, ...added, ...removed], { type: 'RemoveSubject', receiverId: 'r1', subject: account, now: 104 })).toEqual([]);
  });

  it(`refuses a subject past ${maxSubjectsPerStream} as the caller's mistake`, () => {
    const history: SsfStreamEvent[] = [...created];
    for (let index = 0; index < maxSubjectsPerStream; index += 1) history.push({ type: 'SsfSubjectAdded', v: 1, streamId: 's1', receiverId: 'r1', subject: { kind: 'family', familyId: `f${index}` }, at: 1 });
    expect(() => run(history, { type: 'AddSubject', receiverId: 'r1', subject: account, now: 2 })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_SSF_REQUEST' }));
  });

  it("the transmitter pauses only an enabled stream, keeping the position it skips to; a receiver's own pause or disable stands", () => {
    const paused = run(created, { type: 'SetStreamStatus', receiverId: 'r1', streamStatus: 'paused', reason: 'failing', by: 'transmitter', skippedTo: 41n, now: 101 });
    expect(paused).toEqual([{ type: 'SsfStreamStatusChanged', v: 1, streamId: 's1', receiverId: 'r1', status: 'paused', reason: 'failing', by: 'transmitter', skippedTo: '41', at: 101 }]);
    const disabled = run(created, { type: 'SetStreamStatus', receiverId: 'r1', streamStatus: 'disabled', by: 'receiver', now: 101 });
    expect(run([...created, ...disabled], { type: 'SetStreamStatus', receiverId: 'r1', streamStatus: 'paused', reason: 'failing', by: 'transmitter', now: 102 })).toEqual([]);
    expect(run([...created, ...disabled], { type: 'SetStreamStatus', receiverId: 'r1', streamStatus: 'disabled', by: 'receiver', now: 102 })).toEqual([]);
    expect(run([...created, ...disabled], { type: 'SetStreamStatus', receiverId: 'r1', streamStatus: 'enabled', by: 'receiver', now: 102 })).toHaveLength(1);
  });

  it('folds a stream: configuration, status with its reason, subjects; deleted at the end', () => {
    const history: SsfStreamEvent[] = [
      ...created,
      { type: 'SsfSubjectAdded', v: 1, streamId: 's1', receiverId: 'r1', subject: account, at: 1 },
      { type: 'SsfStreamStatusChanged', v: 1, streamId: 's1', receiverId: 'r1', status: 'paused', reason: 'r', by: 'receiver', at: 2 },
    ];
    const state = history.reduce(evolveStream, initialStreamState());
    expect(state).toMatchObject({ status: 'live', streamStatus: 'paused', reason: 'r', subjects: new Set(['account:a1']) });
    expect(evolveStream(state, { type: 'SsfStreamDeleted', v: 1, streamId: 's1', receiverId: 'r1', at: 3 })).toEqual({ status: 'deleted', streamId: 's1', receiverId: 'r1' });
  });

  it(`appends a snapshot of the whole stream with every ${snapshotEvery}th change, so the newest ${snapshotReadBack} events always hold one`, () => {
    const history: SsfStreamEvent[] = [...created];
    const family = (index: number) => ({ kind: 'family', familyId: `f${index % 7}` }) as const;
    for (let index = 0; history.length < 1_000; index += 1) {
      const state = history.reduce(evolveStream, initialStreamState());
      const present = state.status === 'live' && state.subjects.has(`family:${family(index).familyId}`);
      history.push(...run(history, present ? { type: 'RemoveSubject', receiverId: 'r1', subject: family(index), now: 200 + index } : { type: 'AddSubject', receiverId: 'r1', subject: family(index), now: 200 + index }));
      if (index % 50 === 0) history.push(...run(history, { type: 'SetStreamStatus', receiverId: 'r1', streamStatus: index % 100 === 0 ? 'paused' : 'enabled', by: 'receiver', now: 200 + index }));
      const newest = history.slice(-snapshotReadBack);
      expect(newest.some(startsStreamFold)).toBe(true);
    }
    const snapshots = history.filter((event) => event.type === 'SsfStreamSnapshotted');
    expect(snapshots.length).toBeGreaterThanOrEqual(Math.floor(history.length / (snapshotEvery + 1)));
    // A fold from the newest snapshot is the fold from the start.
    const whole = history.reduce(evolveStream, initialStreamState());
    const lastSnapshot = history.findLastIndex((event) => event.type === 'SsfStreamSnapshotted');
    const fromSnapshot = history.slice(lastSnapshot).reduce(evolveStream, initialStreamState());
    expect(fromSnapshot).toEqual(whole);
  });

  it('takes the snapshot as the stream will stand after the change, and leaves the state it was given as it was', () => {
    const history: SsfStreamEvent[] = [...created];
    for (let index = 0; index < snapshotEvery - 1; index += 1) history.push({ type: 'SsfSubjectAdded', v: 1, streamId: 's1', receiverId: 'r1', subject: { kind: 'family', familyId: `f${index}` }, at: 1 });
    const state = history.reduce(evolveStream, initialStreamState());
    const events = decideStream({ type: 'AddSubject', receiverId: 'r1', subject: account, now: 300 }, state);
    expect(events.map((event) => event.type)).toEqual(['SsfSubjectAdded', 'SsfStreamSnapshotted']);
    const snapshot = events[1]!;
    expect(snapshot).toMatchObject({ streamId: 's1', receiverId: 'r1', configuration, status: 'enabled', at: 300 });
    expect(snapshot.type === 'SsfStreamSnapshotted' && snapshot.subjects).toHaveLength(snapshotEvery);
    expect(snapshot.type === 'SsfStreamSnapshotted' && snapshot.subjects).toContainEqual(account);
    expect(state.status === 'live' && state.subjects.has('account:a1')).toBe(false);
  });

  it('keeps the latest verification a fold has seen across a snapshot (verifications are recorded apart)', () => {
    const verified = evolveStream(created.reduce(evolveStream, initialStreamState()), { type: 'SsfVerificationRequested', v: 1, streamId: 's1', receiverId: 'r1', at: 500 });
    const snapshotted = evolveStream(verified, { type: 'SsfStreamSnapshotted', v: 1, streamId: 's1', receiverId: 'r1', configuration, status: 'enabled', subjects: [], at: 501 });
    expect(snapshotted).toMatchObject({ lastVerificationAt: 500 });
  });
});


describe('a folded stream configuration', () => {
  it('shares its event types and their lists with every other stream folded from the log, each read parsing its own copies', async () => {
    const { eventsByDefault } = await import('./event-types.js');
    // Each event as the log hands it out: parsed from its own JSON, so its strings are copies.
    const fromTheLog = (streamId: string): SsfStreamEvent =>
      JSON.parse(JSON.stringify({ type: 'SsfStreamCreated', v: 1, streamId, receiverId: 'r1', configuration: { delivery: { method: 'poll' }, eventsRequested: [...eventsByDefault], eventsDelivered: [...eventsByDefault] }, at: 100 })) as SsfStreamEvent;
    const [one, two] = ['s1', 's2'].map((streamId) => evolveStream(initialStreamState(), fromTheLog(streamId)));
    if (one?.status !== 'live' || two?.status !== 'live') throw new Error('both streams are live');
    expect(one.configuration.eventsRequested).toEqual(eventsByDefault);
    expect(one.configuration.eventsRequested).toBe(two.configuration.eventsRequested);
    expect(one.configuration.eventsDelivered).toBe(two.configuration.eventsDelivered);
    // A list nobody else has is kept as it is, its known types still the shared strings.
    const custom = evolveStream(initialStreamState(), { ...fromTheLog('s3'), configuration: { delivery: { method: 'poll' }, eventsRequested: ['https://example.com/unknown', eventsByDefault[0]!], eventsDelivered: [eventsByDefault[0]!] } } as SsfStreamEvent);
    expect(custom.status === 'live' && custom.configuration.eventsRequested).toEqual(['https://example.com/unknown', eventsByDefault[0]]);
  });
});
