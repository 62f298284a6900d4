import { z } from 'zod';
import { CodedError, TesseraEvent, isOneOf, type TesseraEventType } from '@tessera/events';
import { maxIndexedPosition } from './audit-index-schema.js';

/**
 * The filters of `GET /admin/v1/events` and `tessera audit`, parsed by one function so that an
 * operator on the machine and a tool over HTTPS ask the same question and get the same rows.
 * Parameter names are the query string's; the CLI spells them as flags.
 */
export interface EventQuery {
  readonly account?: string;
  readonly family?: string;
  readonly apiLoginId?: string;
  readonly apiId?: string;
  /** Empty: every type. */
  readonly types: readonly TesseraEventType[];
  /** Epoch milliseconds, inclusive. */
  readonly since?: number;
  /** Epoch milliseconds, exclusive. */
  readonly until?: number;
  readonly limit: number;
  /** From the cursor: rows strictly after this log position. */
  readonly after?: bigint;
}

export const eventQueryLimit = { default: 100, max: 1000 } as const;

export const eventTypes: readonly TesseraEventType[] = TesseraEvent.options.map((option) => option.shape.type.value);

/** A filter that cannot be used, naming the parameter: a 400 over HTTP, a usage error in the CLI. */
export class InvalidQuery extends CodedError {
  readonly code = 'ERR_INVALID_AUDIT_QUERY';
  constructor(
    readonly parameter: string,
    readonly reason: string,
  ) {
    super(`query parameter ${parameter}: ${reason}`);
    this.name = 'InvalidQuery';
  }
}

/** Parameters as they arrive: a query string gives a value or a list (a repeated name), flags likewise. */
export type RawParameters = Readonly<Record<string, string | readonly string[] | undefined>>;

const single = ['account', 'family', 'api_login_id', 'api_id', 'since', 'until', 'limit', 'cursor'] as const;
const known = new Set<string>([...single, 'type']);
const identifier = z.string().min(1, 'must not be empty').max(128, 'must be at most 128 characters');

export function parseEventQuery(raw: RawParameters): EventQuery {
  // A misspelt filter must not widen the answer to every event without a word.
  for (const name of Object.keys(raw)) if (!known.has(name) && raw[name] !== undefined) throw new InvalidQuery(name, 'unknown query parameter');
  const value = (name: (typeof single)[number]): string | undefined => {
    const given = raw[name];
    if (given === undefined || typeof given === 'string') return given;
    if (given.length > 1) throw new InvalidQuery(name, 'given more than once; it takes one value');
    return given[0];
  };
  const id = (name: 'account' | 'family' | 'api_login_id' | 'api_id') => {
    const given = value(name);
    if (given === undefined) return undefined;
    const checked = identifier.safeParse(given);
    if (!checked.success) throw new InvalidQuery(name, checked.error.issues[0]?.message ?? 'invalid');
    return checked.data;
  };
  const typesGiven = raw.type === undefined ? [] : typeof raw.type === 'string' ? [raw.type] : raw.type;
  const types = typesGiven.map((type) => {
    if (!isOneOf(eventTypes, type)) throw new InvalidQuery('type', `unknown event type "${type}"; one of: ${eventTypes.join(', ')}`);
    return type;
  });
  const since = optionalInstant(value('since'), 'since');
  const until = optionalInstant(value('until'), 'until');
  if (since !== undefined && until !== undefined && until <= since) throw new InvalidQuery('until', 'must be later than since');
  const cursor = value('cursor');
  return {
    ...defined({ account: id('account'), family: id('family'), apiLoginId: id('api_login_id'), apiId: id('api_id'), since, until }),
    types: [...new Set(types)],
    limit: parseLimit(value('limit')),
    ...(cursor === undefined ? {} : { after: decodeCursor(cursor) }),
  };
}

function parseLimit(given: string | undefined): number {
  if (given === undefined) return eventQueryLimit.default;
  const limit = /^\d{1,7}$/.test(given) ? Number(given) : Number.NaN;
  if (!(limit >= 1 && limit <= eventQueryLimit.max)) throw new InvalidQuery('limit', `must be a whole number from 1 to ${eventQueryLimit.max}`);
  return limit;
}

const isoInstant = z.union([z.iso.datetime({ offset: true }), z.iso.date()]);

/**
 * An ISO 8601 instant with its zone (`Z` or an offset), or a date (midnight UTC). A time without a
 * zone is refused: the server's zone and the operator's may differ. Epoch milliseconds.
 */
export function parseInstant(given: string, parameter: string): number {
  const at = isoInstant.safeParse(given).success ? Date.parse(given) : Number.NaN;
  if (Number.isNaN(at)) throw new InvalidQuery(parameter, 'must be an ISO 8601 time with a zone, e.g. 2026-11-22T14:03:00Z, or a date, e.g. 2026-11-22');
  return at;
}

function optionalInstant(given: string | undefined, parameter: string): number | undefined {
  return given === undefined ? undefined : parseInstant(given, parameter);
}

/**
 * Cursors are opaque to clients: today the log position of the last row of a page, base64url
 * encoded with a version prefix, so that their form can change without a client noticing.
 */
export function encodeCursor(position: bigint): string {
  return Buffer.from(`p1:${position}`).toString('base64url');
}

/**
 * The position a cursor names. Forged ones are refused as the caller's mistake: a position past
 * what the index can hold (maxIndexedPosition) never came from this server, and would reach
 * SQLite as a number it cannot bind.
 */
export function decodeCursor(cursor: string): bigint {
  const text = /^[A-Za-z0-9_-]{1,64}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('latin1') : '';
  const match = /^p1:(0|[1-9]\d{0,18})$/.exec(text);
  const position = match ? BigInt(match[1]!) : undefined;
  if (position === undefined || position > maxIndexedPosition || encodeCursor(position) !== cursor) throw new InvalidQuery('cursor', 'is not a cursor this server gave out');
  return position;
}

/** Drops the undefined members, so that an absent filter is absent rather than `undefined`. */
function defined<T extends Record<string, unknown>>(object: T): Partial<T> {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as Partial<T>;
}
