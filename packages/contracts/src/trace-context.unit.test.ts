import { describe, expect, it } from 'vitest';
import { EventMetadata } from './events.js';
import { formatTraceparent, parseTraceparent } from './trace-context.js';

describe('the traceparent an event keeps in its metadata', () => {
  const example = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

  it('reads W3C Trace Context version 00 and writes it back the same', () => {
    const parsed = parseTraceparent(example);
    expect(parsed).toEqual({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 });
    expect(formatTraceparent(parsed!)).toBe(example);
    expect(formatTraceparent({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 0 })).toBe(example.replace(/01$/, '00'));
  });

  it('refuses what is not one: all-zero ids, upper case, another version, missing parts', () => {
    for (const invalid of [
      '00-00000000000000000000000000000000-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01',
      '00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01',
      'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-01',
      undefined,
    ]) {
      expect(parseTraceparent(invalid), String(invalid)).toBeUndefined();
    }
  });

  it('is optional in EventMetadata, and a malformed one is refused', () => {
    expect(EventMetadata.parse({ requestId: 'r' })).toEqual({ requestId: 'r' });
    expect(EventMetadata.parse({ traceparent: example })).toEqual({ traceparent: example });
    expect(EventMetadata.safeParse({ traceparent: 'not-a-traceparent' }).success).toBe(false);
  });
});
