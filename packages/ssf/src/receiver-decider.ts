import { isEventOf, ssfReceiverEventTypes, type SsfReceiverEvent } from '@tessera/events';
import { assertNever, type Decider } from '@tessera/domain';
import { SsfReceiverExists, SsfReceiverNotFound } from './ssf-errors.js';

/** One receiver (its own stream, `ssfreceiver-<id>`): only its token's keyed hash reaches here. */
export type ReceiverState =
  | { readonly status: 'none' }
  | { readonly status: 'active'; readonly receiverId: string }
  | { readonly status: 'revoked'; readonly receiverId: string; readonly revokedAt: number };

export type ReceiverCommand =
  | {
      readonly type: 'RegisterReceiver';
      readonly receiverId: string;
      readonly name: string;
      readonly tokenHash: string;
      readonly hashingKey: string;
      /** The accounts it is scoped to; undefined: every account. */
      readonly accounts?: readonly string[] | undefined;
      readonly now: number;
    }
  | { readonly type: 'RevokeReceiver'; readonly receiverId: string; readonly now: number };

export function evolveReceiver(_state: ReceiverState, event: SsfReceiverEvent): ReceiverState {
  switch (event.type) {
    case 'SsfReceiverRegistered':
      return { status: 'active', receiverId: event.receiverId };
    case 'SsfReceiverRevoked':
      return { status: 'revoked', receiverId: event.receiverId, revokedAt: event.at };
    default:
      return assertNever(event);
  }
}

export function decideReceiver(command: ReceiverCommand, state: ReceiverState): SsfReceiverEvent[] {
  switch (command.type) {
    case 'RegisterReceiver':
      // A fresh random id: a stream that exists already is a bug, not a caller's mistake.
      if (state.status !== 'none') throw new SsfReceiverExists();
      return [
        {
          type: 'SsfReceiverRegistered',
          v: 1,
          receiverId: command.receiverId,
          name: command.name,
          tokenHash: command.tokenHash,
          hashingKey: command.hashingKey,
          ...(command.accounts === undefined ? {} : { accounts: [...command.accounts] }),
          at: command.now,
        },
      ];
    case 'RevokeReceiver':
      if (state.status === 'none') throw new SsfReceiverNotFound(command.receiverId);
      // Revoking twice changes nothing.
      if (state.status === 'revoked') return [];
      return [{ type: 'SsfReceiverRevoked', v: 1, receiverId: state.receiverId, at: command.now }];
    default:
      return assertNever(command);
  }
}

export const receiverDecider: Decider<ReceiverCommand, ReceiverState, SsfReceiverEvent> = {
  isEvent: (event) => isEventOf(ssfReceiverEventTypes, event),
  decide: decideReceiver,
  evolve: evolveReceiver,
  initialState: () => ({ status: 'none' }),
};
