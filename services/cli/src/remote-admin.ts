import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { CodedError } from '@tessera/contracts';
import { CliError, NotFound } from './cli-error.js';

/** Where the CLI sends admin requests instead of opening the data folder (TESSERA_ADMIN_URL and its token). */
export interface RemoteAdminTarget {
  /** The admin listener's origin, https. */
  readonly url: string;
  readonly tokenFile: string;
  /** PEM; without it the system's CAs. */
  readonly caFile?: string | undefined;
}

/** The control region alone writes accounts: the admin API's 409 naming it is the CLI's exit 5, as on the data folder. */
export class RemoteNotControlRegion extends CodedError {
  readonly code = 'ERR_NOT_CONTROL_REGION';
}

/** The admin API refused the token, failed, or could not be reached: exit 1, with what it said. */
export class RemoteAdminFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminApiFailure';
  }
}

/** An admin request's answer must come within this long: every call has a bound. */
const requestTimeoutMs = 30_000;
/** No admin answer is larger; a bigger one is not the admin API. */
const maxAnswerBytes = 8 * 1024 * 1024;

export interface RemoteAdmin {
  /** The JSON answer of a 2xx; refusals throw: 400 a usage error (exit 2), 404 not found (3), 409 another region's (5), else exit 1. */
  send<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<T>;
}

/**
 * A client of the admin API for the CLI: HTTPS only, the token read from its file (never an
 * argument, so it is in no process list or shell history), the listener's certificate checked
 * against TESSERA_ADMIN_CA_FILE or the system's CAs. Nothing it sends or receives is printed but
 * the answer the command prints.
 */
export function remoteAdmin(target: RemoteAdminTarget): RemoteAdmin {
  const token = tokenIn(target.tokenFile);
  const ca = target.caFile === undefined ? undefined : fileText(target.caFile, 'TESSERA_ADMIN_CA_FILE');
  return {
    send: <T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) =>
      new Promise<T>((resolve, reject) => {
        const url = new URL(path, target.url);
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const outgoing = request(
          url,
          {
            method,
            ...(ca === undefined ? {} : { ca }),
            headers: {
              authorization: `Bearer ${token}`,
              accept: 'application/json',
              ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
            },
            timeout: requestTimeoutMs,
          },
          (incoming) => {
            const chunks: Buffer[] = [];
            let size = 0;
            incoming.on('data', (chunk: Buffer) => {
              size += chunk.length;
              if (size > maxAnswerBytes) {
                incoming.destroy();
                reject(new RemoteAdminFailure(`the admin API at ${target.url} answered more than ${maxAnswerBytes} bytes`));
                return;
              }
              chunks.push(chunk);
            });
            incoming.on('error', (error) => reject(new RemoteAdminFailure(`the admin API at ${target.url}: ${error.message}`)));
            incoming.on('end', () => {
              const status = incoming.statusCode ?? 0;
              const text = Buffer.concat(chunks).toString('utf8');
              let answer: unknown;
              try {
                answer = text === '' ? undefined : JSON.parse(text);
              } catch {
                reject(new RemoteAdminFailure(`the admin API at ${target.url} answered ${status} with a body that is not JSON`));
                return;
              }
              if (status >= 200 && status < 300) resolve(answer as T); // Cast: the admin API's documented answer for this route (docs/operations.md).
              else reject(refusal(target.url, status, answer));
            });
          },
        );
        outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${requestTimeoutMs / 1000} s`)));
        outgoing.on('error', (error: NodeJS.ErrnoException) => reject(new RemoteAdminFailure(`cannot reach the admin API at ${target.url}: ${error.code ?? error.message}`)));
        outgoing.end(payload);
      }),
  };
}

/** A problem+json refusal as the CLI's error: its detail is the line printed. */
function refusal(url: string, status: number, answer: unknown): Error {
  // Cast: an RFC 9457 problem, each member checked before use.
  const problem = typeof answer === 'object' && answer !== null ? (answer as { detail?: unknown; type?: unknown; errors?: unknown }) : {};
  const fields = Array.isArray(problem.errors)
    ? problem.errors.flatMap((entry: { field?: unknown; message?: unknown }) => (typeof entry?.field === 'string' && typeof entry.message === 'string' ? [`${entry.field}: ${entry.message}`] : []))
    : [];
  const detail = `${typeof problem.detail === 'string' ? problem.detail : `HTTP ${status}`}${fields.length > 0 ? ` (${fields.join('; ')})` : ''}`;
  if (status === 400) return new CliError(detail);
  if (status === 404) return new NotFound(detail);
  if (status === 409 && problem.type === 'urn:tessera:problem:not-control-region') return new RemoteNotControlRegion(detail);
  if (status === 401) return new RemoteAdminFailure(`the admin API at ${url} refused the admin token in TESSERA_ADMIN_TOKEN_FILE (401): ${detail}`);
  if (status === 403) return new RemoteAdminFailure(`the admin API at ${url} refused (403): ${detail}`);
  return new RemoteAdminFailure(`the admin API at ${url} answered ${status}: ${detail}`);
}

function tokenIn(file: string): string {
  const token = fileText(file, 'TESSERA_ADMIN_TOKEN_FILE').trim();
  if (token === '' || /\s/.test(token)) throw new CliError(`TESSERA_ADMIN_TOKEN_FILE ${file}: holds no admin token (one line, the token alone)`);
  return token;
}

function fileText(file: string, variable: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    // The code says why without echoing the file.
    throw new CliError(`${variable} ${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}
