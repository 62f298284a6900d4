import { randomUUID } from 'node:crypto';
import { InvalidArgument, ssfReceiverEventTypes, ssfStreams, type EventMetadata } from '@tessera/events';
import { unsafeNameCharacter } from '@tessera/domain';
import { handleCommand, readAllOf, type CommandStore, type EventStore } from '@tessera/event-store';
import { randomToken, type SecretHasher } from '@tessera/tokens';
import { receiverDecider, type ReceiverCommand } from './receiver-decider.js';
import { InvalidSsfReceiverInput } from './ssf-errors.js';

/** `tss_`: a scanner that knows Tessera's other prefixes finds a leaked receiver token too. */
export const newReceiverToken = () => `tss_${randomToken(32)}`;

export interface ReceiverServiceDeps {
  readonly store: CommandStore;
  /** Needed by `create` alone. */
  readonly hasher?: SecretHasher;
  /** Epoch seconds. */
  readonly now: () => number;
  /** Who manages receivers ('cli', 'admin:<id>'): on each event for the audit trail. */
  readonly actor: string;
  readonly metadata?: EventMetadata;
}

export interface CreatedReceiver {
  readonly receiverId: string;
  /** Exists only here: the log keeps its keyed hash. */
  readonly token: string;
  readonly name: string;
  readonly accounts: readonly string[] | undefined;
}

export interface ReceiverSummary {
  readonly receiverId: string;
  readonly name: string;
  /** The accounts it is scoped to; undefined: every account. */
  readonly accounts: readonly string[] | undefined;
  readonly createdAt: number;
  readonly revokedAt: number | undefined;
}

/** Receivers of the Shared Signals transmitter: the CLI and the admin API call it. */
export function createReceiverService(deps: ReceiverServiceDeps) {
  const { store, hasher } = deps;
  const metadata: EventMetadata = { ...deps.metadata, actor: deps.actor };
  return {
    async create(input: { readonly name: string; readonly accounts?: readonly string[] | undefined }): Promise<CreatedReceiver> {
      if (!hasher) throw new InvalidArgument('creating a receiver needs the hasher in the receiver service deps');
      const name = validName(input.name);
      const accounts = validAccounts(input.accounts);
      const receiverId = randomUUID();
      const token = newReceiverToken();
      await handleCommand(store, {
        stream: ssfStreams.receiver(receiverId),
        decider: receiverDecider,
        command: (): ReceiverCommand => ({ type: 'RegisterReceiver', receiverId, name, tokenHash: hasher.hash(token), hashingKey: hasher.fingerprint, accounts, now: deps.now() }),
        metadata,
        newStream: true,
      });
      return { receiverId, token, name, accounts };
    },
    /** Its token is refused from then on, and its streams deliver nothing more; twice changes nothing. */
    async revoke(receiverId: string): Promise<{ readonly receiverId: string; readonly revokedAt: number; readonly alreadyRevoked: boolean }> {
      const { events, state } = await handleCommand(store, {
        stream: ssfStreams.receiver(receiverId),
        decider: receiverDecider,
        command: (): ReceiverCommand => ({ type: 'RevokeReceiver', receiverId, now: deps.now() }),
        metadata,
        onConflict: { retries: 3 },
      });
      const revokedAt = state.status === 'revoked' ? state.revokedAt : deps.now();
      return { receiverId, revokedAt, alreadyRevoked: events.length === 0 };
    },
  };
}

export type ReceiverService = ReturnType<typeof createReceiverService>;

/** Every receiver, folded from the log: never its token or its hash. */
export async function listReceivers(store: Pick<EventStore, 'readAll'>): Promise<ReceiverSummary[]> {
  const receivers = new Map<string, ReceiverSummary>();
  for await (const page of readAllOf(store, ssfReceiverEventTypes)) {
    for (const { event } of page) {
      if (event.type === 'SsfReceiverRegistered') {
        receivers.set(event.receiverId, { receiverId: event.receiverId, name: event.name, accounts: event.accounts, createdAt: event.at, revokedAt: undefined });
      } else {
        const receiver = receivers.get(event.receiverId);
        if (receiver) receivers.set(receiver.receiverId, { ...receiver, revokedAt: event.at });
      }
    }
  }
  return [...receivers.values()];
}

/** Unscoped when none is given; otherwise 1 to 100 distinct account ids. */
function validAccounts(accounts: readonly string[] | undefined): readonly string[] | undefined {
  if (accounts === undefined || accounts.length === 0) return undefined;
  const distinct = [...new Set(accounts)];
  if (distinct.length > 100) throw new InvalidSsfReceiverInput('a receiver is scoped to at most 100 accounts', 'accounts');
  if (distinct.some((account) => account.trim() === '' || account.length > 128 || unsafeNameCharacter.test(account))) throw new InvalidSsfReceiverInput('an account id is 1 to 128 printable characters', 'accounts');
  return distinct;
}

function validName(name: string): string {
  if (name.trim() === '' || name.length > 200) throw new InvalidSsfReceiverInput('a receiver name is 1 to 200 characters, not blank');
  if (unsafeNameCharacter.test(name)) throw new InvalidSsfReceiverInput('a receiver name may not hold control characters (escape sequences, line breaks, tabs, bidi overrides)');
  return name;
}
