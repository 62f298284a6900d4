import { isEventOf, signingKeyEventTypes, type SigningKeyEvent, type SigningKeyPublished, type SigningKeyRetired } from '@tessera/events';
import type { Decider } from './decider.js';
import { DomainError, assertNever } from './errors.js';

/**
 * The signing-key stream: which keys were published, in order, and which are retired. Only
 * public halves and key ids are here; which private halves a host holds is its own business,
 * so a command names the keys it wants retired.
 */
export interface SigningKeysState {
  /** Oldest first. */
  readonly published: readonly string[];
  readonly retired: ReadonlySet<string>;
}

export const initialSigningKeysState = (): SigningKeysState => ({ published: [], retired: new Set() });

/** Published and not retired, oldest first. */
export const activeSigningKeys = (state: SigningKeysState): string[] => state.published.filter((kid) => !state.retired.has(kid));

export type SigningKeyCommand = {
  readonly type: 'RotateSigningKeys';
  /** The new key's public half: made, and its private half stored, before the decision. */
  readonly published: SigningKeyPublished;
  /** Keys asked for by id: each must be active. */
  readonly named: readonly string[];
  /** The active keys whose private half this host holds: retired without being named. */
  readonly heldHere: readonly string[];
  /** Epoch seconds. */
  readonly now: number;
  /** Until when a retired key stays in the JWKS: the longest token lifetime plus clock skew from now. */
  readonly retainUntil: number;
};

/** Idempotent: an issuer applies the key it published itself, then the log delivers it again. */
export function evolveSigningKeys(state: SigningKeysState, event: SigningKeyEvent): SigningKeysState {
  switch (event.type) {
    case 'SigningKeyPublished':
      return state.published.includes(event.kid) ? state : { ...state, published: [...state.published, event.kid] };
    case 'SigningKeyRetired':
      return state.retired.has(event.kid) ? state : { ...state, retired: new Set(state.retired).add(event.kid) };
    default:
      return assertNever(event);
  }
}

export function decideSigningKeys(command: SigningKeyCommand, state: SigningKeysState): SigningKeyEvent[] {
  switch (command.type) {
    case 'RotateSigningKeys': {
      const active = activeSigningKeys(state);
      const unknown = command.named.filter((kid) => !active.includes(kid));
      if (unknown.length > 0) throw new DomainError('ERR_SIGNING_KEY_NOT_FOUND', `no active signing key ${unknown.join(', ')}`);
      const retirements = active
        .filter((kid) => command.heldHere.includes(kid) || command.named.includes(kid))
        .map((kid): SigningKeyRetired => ({ type: 'SigningKeyRetired', v: 1, kid, at: command.now, retainUntil: command.retainUntil }));
      // Published first: an issuer sharing the folder switches to the new key before it loses the old one.
      return [command.published, ...retirements];
    }
    default:
      return assertNever(command.type);
  }
}

export const signingKeysDecider: Decider<SigningKeyCommand, SigningKeysState, SigningKeyEvent> = {
  isEvent: (event) => isEventOf(signingKeyEventTypes, event),
  decide: decideSigningKeys,
  evolve: evolveSigningKeys,
  initialState: initialSigningKeysState,
};
