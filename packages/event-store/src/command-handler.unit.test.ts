import { describe, expect, it } from 'vitest';
import { streams, type AccountEvent, type TokenIssued, type TokenRotated } from '@tessera/events';
import { DomainError, accountDecider, familyDecider, type AccountCommand, type AccountState, type Decider, type FamilyState } from '@tessera/domain';
import { handleCommand, type CommandStore } from './command-handler.js';
import { ExpectedRevisionConflict, type ReadStreamOptions } from './event-store.js';
import { InMemoryEventStore } from './in-memory-event-store.js';

const now = 1_800_000_000;
const hash = 'h'.repeat(43);
const register = (accountId: string): AccountCommand => ({
  type: 'RegisterAccount',
  accountId,
  name: 'Shop',
  permissions: ['a'],
  apiCredential: { credentialId: 'c1', apiLoginId: 'login', transactionKeyHash: hash, hashingKey: 'K'.repeat(22) },
  now,
});
const setPermissions = (permissions: string[]): AccountCommand => ({ type: 'SetPermissions', permissions, now });
const permissionsOf = (state: AccountState) => (state.status === 'registered' ? state.permissions : undefined);

/** The in-memory store, with a record of reads and, once, another writer's append right after a read. */
function storeWithAnotherWriter() {
  const store = new InMemoryEventStore();
  const reads: (ReadStreamOptions | undefined)[] = [];
  let interleave: (() => Promise<unknown>) | undefined;
  const spied: CommandStore = {
    readStream: async (stream, options) => {
      reads.push(options);
      const events = await store.readStream(stream, options);
      const other = interleave;
      interleave = undefined;
      await other?.();
      return events;
    },
    append: (stream, events, options) => store.append(stream, events, options),
  };
  return { store, spied, reads, interleaveOnce: (write: () => Promise<unknown>) => (interleave = write) };
}

const accountId = 'acct-1';
const stream = streams.account(accountId);
const registered = async (store: CommandStore) =>
  handleCommand(store, { stream, decider: accountDecider, command: () => register(accountId), metadata: { actor: 'test' }, newStream: true });

describe('handleCommand', () => {
  it('a new stream: decides on the initial state without reading, and appends with no_stream', async () => {
    const { store, spied, reads } = storeWithAnotherWriter();
    const outcome = await registered(spied);
    expect(reads).toEqual([]);
    expect(outcome.events.map((e) => e.type)).toEqual(['AccountRegistered', 'ApiCredentialIssued']);
    expect(outcome.appended?.nextExpectedRevision).toBe(1n);
    expect(permissionsOf(outcome.state)).toEqual(['a']);
    const recorded = await store.readStream(stream);
    expect(recorded.map((r) => r.metadata)).toEqual([{ actor: 'test' }, { actor: 'test' }]);
  });

  it('folds the whole stream, hands the state to the command, and appends at the revision read', async () => {
    const { store, spied, reads } = storeWithAnotherWriter();
    await registered(store);
    const seen: AccountState[] = [];
    const outcome = await handleCommand(spied, {
      stream,
      decider: accountDecider,
      command: (state) => {
        seen.push(state);
        return setPermissions(['b']);
      },
      metadata: (event: AccountEvent) => ({ accountId: event.accountId }),
    });
    expect(reads).toEqual([undefined]);
    expect(seen.map(permissionsOf)).toEqual([['a']]);
    expect(outcome.appended?.nextExpectedRevision).toBe(2n);
    expect(permissionsOf(outcome.state)).toEqual(['b']);
    expect((await store.readStream(stream))[2]?.metadata).toEqual({ accountId });
  });

  it("with read 'last-event', evolves the initial state with the newest event alone", async () => {
    const { store, spied, reads } = storeWithAnotherWriter();
    const family = streams.family('fam-1');
    const issued: TokenIssued = {
      type: 'TokenIssued',
      v: 1,
      familyId: 'fam-1',
      accountId,
      credentialId: 'c1',
      apiLoginId: 'login',
      generation: 0,
      refreshTokenHash: 'a'.repeat(43),
      jti: 'j0',
      scope: [],
      issuedAt: now,
      accessExpiresAt: now + 60,
      refreshExpiresAt: now + 600,
    };
    const rotated: TokenRotated = { ...issued, type: 'TokenRotated', generation: 1, refreshTokenHash: 'b'.repeat(43), jti: 'j1' };
    await store.append(family, [{ event: issued }, { event: rotated }], { expectedRevision: 'no_stream' });
    const seen: FamilyState[] = [];
    const outcome = await handleCommand(spied, {
      stream: family,
      decider: familyDecider,
      command: (state) => {
        seen.push(state);
        return { type: 'RevokeToken' as const, presentedRefreshToken: () => 'b'.repeat(43), now };
      },
      metadata: {},
      read: 'last-event',
    });
    expect(reads).toEqual([{ direction: 'backwards', maxCount: 1 }]);
    expect(seen).toEqual([expect.objectContaining({ status: 'active', generation: 1 })]);
    expect(outcome.events).toEqual([expect.objectContaining({ type: 'TokenRevoked', generation: 1 })]);
    expect(outcome.appended?.nextExpectedRevision).toBe(2n);
  });

  it('after a conflict, reads and decides again on the newer state when retries are allowed', async () => {
    const { store, spied, interleaveOnce } = storeWithAnotherWriter();
    await registered(store);
    interleaveOnce(() => store.append(stream, [{ event: { type: 'PermissionsChanged', v: 1, accountId, permissions: ['other'], at: now } }], { expectedRevision: 'any' }));
    const seen: (readonly string[] | undefined)[] = [];
    const outcome = await handleCommand(spied, {
      stream,
      decider: accountDecider,
      command: (state) => {
        seen.push(permissionsOf(state));
        return setPermissions([...(permissionsOf(state) ?? []), 'mine']);
      },
      metadata: {},
      onConflict: { retries: 1 },
    });
    expect(seen).toEqual([['a'], ['other']]);
    expect(permissionsOf(outcome.state)).toEqual(['other', 'mine']);
    expect((await store.readStream(stream)).map((r) => r.revision)).toEqual([0n, 1n, 2n, 3n]);
  });

  it('once retries are used up, throws the answer made from the conflict, having written nothing of its own', async () => {
    const { store, spied, interleaveOnce } = storeWithAnotherWriter();
    await registered(store);
    interleaveOnce(() => store.append(stream, [{ event: { type: 'PermissionsChanged', v: 1, accountId, permissions: ['other'], at: now } }], { expectedRevision: 'any' }));
    const answered: ExpectedRevisionConflict[] = [];
    const refusal = new DomainError('ERR_ACCOUNT_EXISTS', 'somebody else changed it');
    await expect(
      handleCommand(spied, {
        stream,
        decider: accountDecider,
        command: () => setPermissions(['mine']),
        metadata: {},
        onConflict: {
          answer: (conflict) => {
            answered.push(conflict);
            return refusal;
          },
        },
      }),
    ).rejects.toBe(refusal);
    expect(answered).toHaveLength(1);
    expect(answered[0]).toMatchObject({ stream, expected: 1n, actual: 2n });
    expect((await store.readStream(stream)).map((r) => r.event)).not.toContainEqual(expect.objectContaining({ permissions: ['mine'] }));
  });

  it('without an answer, throws the ExpectedRevisionConflict itself', async () => {
    const { store } = storeWithAnotherWriter();
    await registered(store);
    // A new stream that is not: the append with no_stream conflicts, and there is no retry.
    await expect(registered(store)).rejects.toBeInstanceOf(ExpectedRevisionConflict);
  });

  it("a new stream retried after a conflict is read, so the decider gives the domain's answer", async () => {
    const { store } = storeWithAnotherWriter();
    await registered(store);
    const again = handleCommand(store, {
      stream,
      decider: accountDecider,
      command: () => register(accountId),
      metadata: {},
      newStream: true,
      onConflict: { retries: 1 },
    });
    await expect(again).rejects.toMatchObject({ code: 'ERR_ACCOUNT_EXISTS' });
  });

  it('lets a refusal of the decider or of beforeAppend through, and appends nothing', async () => {
    const { store } = storeWithAnotherWriter();
    await expect(
      handleCommand(store, { stream, decider: accountDecider, command: () => setPermissions(['x']), metadata: {} }),
    ).rejects.toMatchObject({ code: 'ERR_ACCOUNT_NOT_FOUND' });
    const unavailable = new Error('no signing key');
    await expect(
      handleCommand(store, {
        stream,
        decider: accountDecider,
        command: () => register(accountId),
        metadata: {},
        beforeAppend: () => {
          throw unavailable;
        },
      }),
    ).rejects.toBe(unavailable);
    expect(await store.readStream(stream)).toEqual([]);
  });

  it('appends nothing when the decision is empty', async () => {
    const { store } = storeWithAnotherWriter();
    const nothing: Decider<null, null, AccountEvent> = { isEvent: accountDecider.isEvent, decide: () => [], evolve: (state) => state, initialState: () => null };
    const outcome = await handleCommand(store, { stream, decider: nothing, command: () => null, metadata: {} });
    expect(outcome).toEqual({ events: [], state: null, appended: undefined });
    expect(await store.headPosition()).toBeUndefined();
  });

  it('refuses a stream that holds an event its decider does not know, rather than fold it in', async () => {
    const store = new InMemoryEventStore();
    const issued: TokenIssued = {
      type: 'TokenIssued',
      v: 1,
      familyId: 'fam-1',
      accountId: 'acct-1',
      credentialId: 'cred-1',
      apiLoginId: 'tsl_1',
      generation: 0,
      refreshTokenHash: 'H'.repeat(43),
      jti: 'jti-1',
      scope: [],
      issuedAt: 1,
      accessExpiresAt: 2,
      refreshExpiresAt: 3,
    };
    await store.append(stream, [{ event: issued }], { expectedRevision: 'no_stream' });
    await expect(
      handleCommand(store, { stream, decider: accountDecider, command: (): AccountCommand => ({ type: 'SetPermissions', permissions: [], now: 5 }), metadata: {} }),
    ).rejects.toThrow(`stream ${stream} holds a TokenIssued event, which its rules do not know`);
  });
});
