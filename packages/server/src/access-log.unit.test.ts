import { Writable } from 'node:stream';
import Fastify, { LogController } from 'fastify';
import { describe, expect, it } from 'vitest';
import { logEachRequestOnce } from './access-log.js';
import { loggerOptions } from '@tessera/host';

/** A fastify app logging as buildApp's does (redacting pino, fastify's own request lines off), lines captured. */
async function appLoggingAt(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const options = loggerOptions(level);
  const app = Fastify({ logger: { ...options, stream }, logController: new LogController({ disableRequestLogging: true }) });
  logEachRequestOnce(app);
  app.post('/v5/Authorization/get-oauth-token', async () => ({ token: 'eyJ.secret.value' }));
  app.get('/healthz', async () => ({ status: 'ok' }));
  await app.ready();
  return { app, lines };
}

describe('the access line', () => {
  it('is one line per token request at info, with the request id, the path without its query, the status and the time', async () => {
    const { app, lines } = await appLoggingAt('info');
    const answer = await app.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token?refresh_token=tsr_x.y', payload: { transaction_key: 'tsk_secret' } });
    expect(answer.statusCode).toBe(200);
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line).toMatchObject({
      level: 30,
      reqId: expect.any(String),
      req: { method: 'POST', url: '/v5/Authorization/get-oauth-token', remoteAddress: '127.0.0.1' },
      res: { statusCode: 200 },
      msg: 'request completed',
    });
    expect((line!.req as { id: string }).id).toBe(line!.reqId);
    expect(typeof line!.responseTime).toBe('number');
    expect(Object.keys(line!)).toEqual(['level', 'time', 'pid', 'hostname', 'reqId', 'req', 'res', 'responseTime', 'msg']);
    // Neither the body nor the query nor the answer reaches the line.
    expect(JSON.stringify(lines)).not.toMatch(/tsk_secret|tsr_x|eyJ/);
    await app.close();
  });

  it('follows the app logger level: health probes at debug only, nothing at warn', async () => {
    const atInfo = await appLoggingAt('info');
    await atInfo.app.inject({ method: 'GET', url: '/healthz' });
    expect(atInfo.lines).toEqual([]);
    await atInfo.app.close();

    const atDebug = await appLoggingAt('debug');
    await atDebug.app.inject({ method: 'GET', url: '/healthz' });
    expect(atDebug.lines.map((l) => [l.level, (l.req as { url: string }).url])).toEqual([[20, '/healthz']]);
    await atDebug.app.close();

    const atWarn = await appLoggingAt('warn');
    await atWarn.app.inject({ method: 'POST', url: '/v5/Authorization/get-oauth-token', payload: {} });
    expect(atWarn.lines).toEqual([]);
    await atWarn.app.close();
  });
});
