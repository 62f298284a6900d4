import type { FastifyInstance } from 'fastify';
import { CodedError } from '@tessera/contracts';

/**
 * A JSON body member that names an object's prototype: `__proto__`, or `constructor` holding
 * `prototype`, at any depth. fastify's parser refuses such a body (its poisoning protection), and
 * this names the member, so the client reads which field to drop rather than "not valid JSON".
 */
export class ForbiddenBodyField extends CodedError {
  readonly code = 'ERR_FORBIDDEN_BODY_FIELD';
  /** Where it is, dot-separated as validation errors name fields (`a.0.__proto__`). */
  readonly field: string;
  readonly reason: string;

  constructor(path: readonly string[], member: PrototypeMember) {
    super(`the field ${member} is not allowed`);
    this.name = 'ForbiddenBodyField';
    this.field = path.join('.');
    // Not a lookup in an object literal: there `'__proto__': …` would set the literal's prototype.
    this.reason =
      member === '__proto__'
        ? 'a member named __proto__ is not allowed in a JSON body, at any depth'
        : 'a member named constructor that is an object with a prototype member is not allowed in a JSON body, at any depth';
  }
}

type PrototypeMember = '__proto__' | 'constructor.prototype';

/**
 * Parses `application/json` with fastify's own parser, which refuses a prototype member as it
 * refuses malformed JSON (one FST_ERR_CTP_INVALID_JSON_BODY for both, the cause dropped). Only on
 * such a refusal is the body read again, to tell the two apart: an accepted body costs nothing more.
 */
export function parseJsonNamingPrototypeMembers(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // A string, as parseAs says; the parser's type also admits a buffer.
    const text = typeof body === 'string' ? body : body.toString('utf8');
    // fastify's own parser answers through the callback, at once; its type also admits a promise.
    void parse(request, text, (error, value) => {
      if (error === null) return done(null, value);
      done(prototypeMemberIn(text) ?? error, undefined);
    });
  });
}

/** A prototype member of a JSON text (the first one met); undefined when it has none, or is not JSON. */
function prototypeMemberIn(text: string): ForbiddenBodyField | undefined {
  let root: unknown;
  try {
    // fastify's parser skips a byte order mark, as JSON.parse does not.
    root = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    return undefined;
  }
  // Iterative, each step linked to its parent: a 16 KiB body nests deeper than a recursive walk may
  // go, and copying the path at every level would cost the square of that depth.
  const pending: Step[] = [{ value: root }];
  for (let step = pending.pop(); step !== undefined; step = pending.pop()) {
    const { value } = step;
    if (typeof value !== 'object' || value === null) continue;
    // The same tests as secure-json-parse's, which fastify's parser runs: own members only.
    if (Object.hasOwn(value, '__proto__')) return new ForbiddenBodyField([...pathTo(step), '__proto__'], '__proto__');
    const constructor: unknown = Object.hasOwn(value, 'constructor') ? (value as { constructor: unknown }).constructor : undefined;
    if (typeof constructor === 'object' && constructor !== null && Object.hasOwn(constructor, 'prototype')) {
      return new ForbiddenBodyField([...pathTo(step), 'constructor', 'prototype'], 'constructor.prototype');
    }
    const children = Object.entries(value);
    for (let at = children.length - 1; at >= 0; at -= 1) pending.push({ value: children[at]![1], key: children[at]![0], parent: step });
  }
  return undefined;
}

interface Step {
  readonly value: unknown;
  readonly key?: string;
  readonly parent?: Step;
}

function pathTo(step: Step): string[] {
  const path: string[] = [];
  for (let at: Step | undefined = step; at?.key !== undefined; at = at.parent) path.push(at.key);
  return path.reverse();
}
