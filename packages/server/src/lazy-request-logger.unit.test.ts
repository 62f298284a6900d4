import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { LazyRequestLogger } from './lazy-request-logger.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, parent: pino({ level: 'info' }, stream) };
}

describe('LazyRequestLogger', () => {
  it('makes no child logger while nothing is written at an enabled level', () => {
    const { lines, parent } = capture();
    const child = vi.spyOn(parent, 'child');
    const logger = new LazyRequestLogger(parent, { reqId: 'r-1' }, {});
    logger.debug('not enabled');
    logger.trace({ detail: 1 }, 'not enabled');
    expect(child).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
    expect(logger.level).toBe('info');
  });

  it('writes enabled lines through one child that carries the bindings', () => {
    const { lines, parent } = capture();
    const child = vi.spyOn(parent, 'child');
    const logger = new LazyRequestLogger(parent, { reqId: 'r-2' }, {});
    logger.info({ code: 'ERR_X' }, 'refused');
    logger.warn('twice');
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines.map(({ reqId, msg, code }) => ({ reqId, msg, code }))).toEqual([
      { reqId: 'r-2', msg: 'refused', code: 'ERR_X' },
      { reqId: 'r-2', msg: 'twice', code: undefined },
    ]);
  });

  it('a level set on it applies to it alone', () => {
    const { lines, parent } = capture();
    const logger = new LazyRequestLogger(parent, { reqId: 'r-3' }, {});
    logger.level = 'debug';
    logger.debug('now enabled');
    expect(lines.map(({ msg }) => msg)).toEqual(['now enabled']);
    expect(parent.level).toBe('info');
  });
});
