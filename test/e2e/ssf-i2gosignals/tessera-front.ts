import { Agent, createServer, request, type Server } from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What stands between the goSignals CLI and Tessera in the i2goSignals e2e: an HTTPS front on
 * TESSERA_PUBLIC_URL (so every URL of Tessera's metadata leads here), with Tessera's own
 * certificate, forwarding every request to Tessera's public listener. It changes exactly three
 * things the pinned CLI does otherwise than Tessera takes, and counts each change:
 *
 * - `contentType`: the CLI posts a JSON body without a Content-Type (stream create, replace,
 *   status); Tessera answers 415 for that, so `application/json` is added.
 * - `i2goSignalsMembers`: the CLI's stream configuration carries i2goSignals' own members
 *   (`route_mode`, `issuerJWKSUrl`) and an empty `stream_id`, which Tessera refuses as unknown or
 *   empty fields; they are taken out of requests to /ssf/streams.
 * - `audAsArray`: SSF 1.0 lets `aud` be a string, as Tessera writes it; the CLI decodes it only
 *   as an array and fails, so a string `aud` in /ssf/streams answers is handed over as [aud].
 *
 * Polls from the i2goSignals server pass through unchanged; pushes go from Tessera straight to it.
 */
export interface FrontAdjustments {
  contentType: number;
  i2goSignalsMembers: number;
  audAsArray: number;
}

export interface TesseraFront {
  readonly adjustments: FrontAdjustments;
  close(): Promise<void>;
}

const i2goSignalsMembers = ['route_mode', 'issuerJWKSUrl'];

export async function startTesseraFront(port: number, tesseraPort: number, tesseraDataDir: string): Promise<TesseraFront> {
  const certificate = readFileSync(join(tesseraDataDir, 'tls', 'self-signed.crt'));
  const agent = new Agent({ keepAlive: true, ca: certificate });
  const adjustments: FrontAdjustments = { contentType: 0, i2goSignalsMembers: 0, audAsArray: 0 };
  const server: Server = createServer({ key: readFileSync(join(tesseraDataDir, 'tls', 'self-signed.key')), cert: certificate }, (incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      let body = Buffer.concat(chunks);
      const headers = { ...incoming.headers };
      const streams = (incoming.url ?? '').startsWith('/ssf/streams');
      if (body.length > 0 && headers['content-type'] === undefined) {
        headers['content-type'] = 'application/json';
        adjustments.contentType += 1;
      }
      if (streams && body.length > 0) {
        // The CLI's own JSON: an object of string keys.
        const configuration = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
        const before = Object.keys(configuration).length;
        for (const member of i2goSignalsMembers) delete configuration[member];
        if (configuration.stream_id === '') delete configuration.stream_id;
        if (Object.keys(configuration).length !== before) {
          adjustments.i2goSignalsMembers += 1;
          body = Buffer.from(JSON.stringify(configuration));
          headers['content-length'] = String(body.length);
        }
      }
      const upstream = request({ host: '127.0.0.1', port: tesseraPort, method: incoming.method, path: incoming.url, headers, agent }, (answer) => {
        const answered: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => answered.push(chunk));
        answer.on('end', () => {
          let answerBody = Buffer.concat(answered);
          const answerHeaders = { ...answer.headers };
          if (streams && answerBody.length > 0 && /json/.test(answer.headers['content-type'] ?? '')) {
            // One configuration, or an array of them: objects with an `aud` member.
            const parsed = JSON.parse(answerBody.toString('utf8')) as Record<string, unknown> | Record<string, unknown>[];
            const configurations = Array.isArray(parsed) ? parsed : [parsed];
            if (configurations.some((configuration) => typeof configuration.aud === 'string')) {
              for (const configuration of configurations) if (typeof configuration.aud === 'string') configuration.aud = [configuration.aud];
              adjustments.audAsArray += 1;
              answerBody = Buffer.from(JSON.stringify(parsed));
              answerHeaders['content-length'] = String(answerBody.length);
            }
          }
          outgoing.writeHead(answer.statusCode ?? 502, answerHeaders).end(answerBody);
        });
      });
      upstream.on('error', () => outgoing.writeHead(502).end());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolveListening) => server.listen(port, '127.0.0.1', resolveListening));
  return {
    adjustments,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolveClosed) => server.close(() => resolveClosed()));
      agent.destroy();
    },
  };
}
