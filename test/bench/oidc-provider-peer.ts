import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { startChild, type BenchChild } from './children.js';
import type { OidcAlg } from './config.js';
import type { LoadTarget } from './load.js';
import type { RefreshPool } from './refresh-pool.js';

/** Parent side of oidc-provider-server.ts: starts it and describes its token requests. */
export interface OidcProviderPeer {
  readonly child: BenchChild<{ port: number; alg: OidcAlg }>;
  readonly pid: number;
  /** client_credentials: the issuance peer. */
  readonly issue: LoadTarget;
  /** refresh_token grant with rotation, each request taking a token from the pool. */
  refresh(pool: RefreshPool): LoadTarget;
  /** Refresh tokens from `count` real authorization_code flows (setup, not measured). */
  authorizationCodeRefreshTokens(count: number, parallel: number): Promise<string[]>;
  stop(): Promise<void>;
}

// Never visited: the flow reads the code from the redirect's Location header.
const redirectUri = 'https://client.invalid/callback';
const resource = 'urn:tessera-bench:api';

export async function startOidcProviderPeer(options: { alg: OidcAlg; tlsFiles: { cert: string; key: string }; cpuList?: string }): Promise<OidcProviderPeer> {
  const clientId = 'bench-client';
  const clientSecret = randomBytes(32).toString('base64url');
  const child = await startChild<{ port: number; alg: OidcAlg }>('oidc-provider-server.ts', {
    env: {
      BENCH_TLS_CERT: options.tlsFiles.cert,
      BENCH_TLS_KEY: options.tlsFiles.key,
      BENCH_OIDC_ALG: options.alg,
      BENCH_CLIENT_ID: clientId,
      BENCH_CLIENT_SECRET: clientSecret,
      BENCH_REDIRECT_URI: redirectUri,
      NODE_ENV: 'production',
    },
    ...(options.cpuList !== undefined ? { cpuList: options.cpuList } : {}),
  });
  const origin = `https://127.0.0.1:${child.ready.port}`;
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const body = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: clientSecret,
    scope: 'transaction:charge',
  }).toString();
  const ca = readFileSync(options.tlsFiles.cert);
  return {
    child,
    pid: child.process.pid!,
    issue: { url: `${origin}/token`, headers: form, body },
    refresh: (pool) => ({
      url: `${origin}/token`,
      headers: form,
      setupRequest: (req) => ({
        ...req,
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: pool.next(), client_id: clientId, client_secret: clientSecret }).toString(),
      }),
      onResponse: (status, text) => {
        if (status === 200) pool.keep((JSON.parse(text) as { refresh_token: string }).refresh_token);
      },
    }),
    authorizationCodeRefreshTokens: (count, parallel) => authorizationCodeRefreshTokens({ origin, ca, clientId, clientSecret, count, parallel }),
    stop: () => child.stop(),
  };
}

interface Answer {
  readonly status: number;
  readonly location: string | undefined;
  readonly cookies: string[];
  readonly text: string;
}

/**
 * The authorization_code flow as a browser and a client would drive it, `count` times with
 * `parallel` at once, each with its own cookie jar (a new user and session each time):
 * GET /auth → 303 /interaction/:uid → (login and consent answered) 303 /auth/:uid → 303 to the
 * redirect URI with a code → POST /token → { access_token, refresh_token }.
 */
async function authorizationCodeRefreshTokens(options: { origin: string; ca: Buffer; clientId: string; clientSecret: string; count: number; parallel: number }): Promise<string[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.parallel, ca: options.ca });
  const send = (path: string, init: { method?: string; cookies?: Map<string, string>; form?: Record<string, string> } = {}) =>
    new Promise<Answer>((resolve, reject) => {
      const payload = init.form ? new URLSearchParams(init.form).toString() : undefined;
      const headers: Record<string, string> = {};
      if (init.cookies?.size) headers.cookie = [...init.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
      if (payload !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
      const outgoing = request(new URL(path, options.origin), { method: init.method ?? 'GET', agent, headers }, (incoming) => {
        let text = '';
        incoming.setEncoding('utf8');
        incoming.on('data', (chunk: string) => (text += chunk));
        incoming.on('end', () =>
          resolve({ status: incoming.statusCode ?? 0, location: incoming.headers.location, cookies: incoming.headers['set-cookie'] ?? [], text }),
        );
        incoming.on('error', reject);
      });
      outgoing.on('error', reject);
      outgoing.end(payload);
    });
  const redirected = (answer: Answer, cookies: Map<string, string>, step: string): string => {
    for (const cookie of answer.cookies) {
      const [pair] = cookie.split(';');
      const at = pair!.indexOf('=');
      cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    if (answer.status !== 303 && answer.status !== 302) throw new Error(`${step} answered ${answer.status}, not a redirect: ${answer.text.slice(0, 300)}`);
    if (!answer.location) throw new Error(`${step} redirected nowhere`);
    return answer.location;
  };
  const oneFlow = async (): Promise<string> => {
    const cookies = new Map<string, string>();
    const authorize = `/auth?${new URLSearchParams({ client_id: options.clientId, response_type: 'code', redirect_uri: redirectUri, scope: 'transaction:charge', resource, state: randomBytes(8).toString('hex') })}`;
    const interaction = redirected(await send(authorize, { cookies }), cookies, 'GET /auth');
    const resume = redirected(await send(interaction, { cookies }), cookies, 'the interaction');
    const next = redirected(await send(resume, { cookies }), cookies, 'GET /auth/:uid');
    // Login and consent are answered in one interaction: a second one would mean the grant lacks a scope.
    if (!next.startsWith(redirectUri)) throw new Error(`GET /auth/:uid redirected to ${next}, not to the client`);
    const callback = new URL(next);
    const code = callback.searchParams.get('code');
    if (!code) throw new Error(`no code in the redirect: ${callback.search}`);
    const exchanged = await send('/token', {
      method: 'POST',
      form: { grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: options.clientId, client_secret: options.clientSecret },
    });
    if (exchanged.status !== 200) throw new Error(`the code exchange answered ${exchanged.status}: ${exchanged.text.slice(0, 300)}`);
    const tokens = JSON.parse(exchanged.text) as { refresh_token?: string };
    if (!tokens.refresh_token) throw new Error(`the code exchange returned no refresh token: ${Object.keys(tokens).join(', ')}`);
    return tokens.refresh_token;
  };
  const tokens: string[] = [];
  let started = 0;
  try {
    await Promise.all(
      Array.from({ length: options.parallel }, async () => {
        while (started < options.count) {
          started += 1;
          tokens.push(await oneFlow());
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return tokens;
}
