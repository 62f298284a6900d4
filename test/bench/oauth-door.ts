/**
 * The OAuth 2.0 door's cost beside the spec's interface, on one Tessera process: server CPU per
 * client_credentials issuance against get-oauth-token's in the same run (pairs in turn, the order
 * swapped each pair), both at full load at two connection counts, and introspection (RFC 7662)
 * beside a protected request, whose verification it repeats plus one read of the family's last
 * event. Then the peers at the same connection counts, each pinned like Tessera and up while
 * Tessera idles: oidc-provider's client_credentials, and Ory Hydra v2's (hydra-peer.ts) with its
 * default secret hashing and with its cheapest, and Hydra's admin introspection.
 */
import type { OidcAlg } from './config.js';
import { describeCpu, measureCpuPerOperation, processCpuSeconds, type CpuPerOperation } from './cpu-time.js';
import { progress } from './children.js';
import { findHydra, hydraDsnDescription, hydraHashingSettings, startHydraPeer, type HydraHashing } from './hydra-peer.js';
import { load, warmUp, type LoadResult, type LoadTarget } from './load.js';
import { startOidcProviderPeer } from './oidc-provider-peer.js';
import { atLeast, atMost, describeLoad, median, type Row } from './report.js';
import { chargeTarget, freshAccessToken, issueTarget, type TesseraTarget } from './tessera-target.js';
import { dpopProofMaker, type DpopProofMaker } from './dpop-proofs.js';
import type autocannon from 'autocannon';

export interface OAuthDoorOptions {
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly cpuRate: number;
  readonly cpuConnections: number;
  readonly connections: readonly number[];
  readonly pairs: number;
  /** taskset's CPU list for every peer, the one Tessera runs on (pinning.ts); unset: unpinned. */
  readonly cpuList?: string;
  /** oidc-provider's signing algorithm for its client_credentials runs. */
  readonly oidcAlg: OidcAlg;
  /** Called with each peer's pid once it is up, so the report can show the pinning took. */
  readonly onPeer?: (name: string, pid: number) => void;
}

/** A full-load run, and the server's CPU over its measured window per 2xx answer (µs). */
export type FullLoad = LoadResult & { readonly serverCpuMicros: number };

export interface HydraRun {
  readonly hashing: HydraHashing;
  readonly settings: string;
  /** The alg of its access tokens' JWS header. */
  readonly signingAlg: string;
  readonly fullLoad: readonly { readonly connections: number; readonly clientCredentials: FullLoad }[];
  /** Hydra's admin introspection of a token it issued; measured on the default run only, as no secret is hashed there. */
  readonly introspection?: { readonly cpu: CpuPerOperation; readonly load: FullLoad };
}

export interface OAuthDoorResult {
  readonly cpuPairs: readonly { readonly getToken: CpuPerOperation; readonly clientCredentials: CpuPerOperation; readonly dpopClientCredentials: CpuPerOperation }[];
  readonly fullLoad: readonly { readonly connections: number; readonly getToken: FullLoad; readonly clientCredentials: FullLoad }[];
  readonly introspection: { readonly cpu: CpuPerOperation; readonly load: FullLoad };
  readonly verification: CpuPerOperation;
  /** A protected request with a DPoP-bound token and a fresh proof, beside `verification`'s Bearer one. */
  readonly dpopVerification: CpuPerOperation;
  readonly oidcProvider: { readonly alg: OidcAlg; readonly fullLoad: readonly { readonly connections: number; readonly clientCredentials: FullLoad }[] };
  /** Hydra's runs, or why there are none (no Go to build it with, say): the report says so. */
  readonly hydra: { readonly version: string; readonly dsn: string; readonly strategy: string; readonly runs: readonly HydraRun[] } | { readonly skipped: string };
}

const form = { 'content-type': 'application/x-www-form-urlencoded' };
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

export function clientCredentialsTarget(target: TesseraTarget): LoadTarget {
  return {
    url: `${target.origin}/oauth2/token`,
    headers: { ...form, authorization: basic(target.credentials.api_login_id, target.credentials.transaction_key) },
    body: 'grant_type=client_credentials',
  };
}

/**
 * client_credentials with a fresh DPoP proof per request: each issuance makes a bound family. The
 * htu is the token endpoint as the metadata names it (the server's public URL), which is where
 * the client addresses it; the load itself goes to 127.0.0.1.
 */
export function dpopClientCredentialsTarget(target: TesseraTarget, tokenEndpoint: string, proofs: DpopProofMaker): LoadTarget {
  const plain = clientCredentialsTarget(target);
  return {
    ...plain,
    setupRequest: (request: autocannon.Request) => ({ ...request, headers: { ...request.headers, dpop: proofs.proof('POST', tokenEndpoint) } }),
  };
}

/** A protected request with a DPoP-bound access token: `Authorization: DPoP`, and a fresh proof with its `ath` each time. */
function dpopChargeTarget(target: TesseraTarget, publicUrl: string, accessToken: string, proofs: DpopProofMaker): LoadTarget {
  const plain = chargeTarget(target, accessToken);
  return {
    ...plain,
    headers: { ...plain.headers, authorization: `DPoP ${accessToken}` },
    setupRequest: (request: autocannon.Request) => ({ ...request, headers: { ...request.headers, dpop: proofs.proof('POST', `${publicUrl}/v5/Transaction/charge`, accessToken) } }),
  };
}

function introspectionTarget(target: TesseraTarget, gateway: { api_login_id: string; transaction_key: string }, accessToken: string): LoadTarget {
  return {
    url: `${target.origin}/oauth2/introspect`,
    headers: { ...form, authorization: basic(gateway.api_login_id, gateway.transaction_key) },
    body: `token=${accessToken}`,
  };
}

export async function measureOAuthDoor(tessera: TesseraTarget, options: OAuthDoorOptions): Promise<OAuthDoorResult> {
  const cpuOptions = { rate: options.cpuRate, seconds: options.seconds, warmupSeconds: options.warmupSeconds, connections: options.cpuConnections };
  const pid = tessera.process.pid;
  const cpu = async (name: string, target: LoadTarget) => {
    const measured = await measureCpuPerOperation(target, pid, cpuOptions);
    progress(describeCpu(name, measured));
    return measured;
  };
  const full = async (name: string, target: LoadTarget, connections: number, serverPid = pid): Promise<FullLoad> => {
    await warmUp(target, { seconds: options.warmupSeconds, connections });
    const before = processCpuSeconds(serverPid);
    const measured = await load(target, { seconds: options.seconds, connections });
    // Full load saturates the server's core: its CPU per answer is the one figure comparable across servers whatever each one's throughput.
    const serverCpuMicros = ((processCpuSeconds(serverPid) - before) / Math.max(1, Math.round(measured.reqPerSec * measured.seconds))) * 1e6;
    progress(`${describeLoad(name, measured)}, ${serverCpuMicros.toFixed(0)} µs server CPU per 2xx`);
    return { ...measured, serverCpuMicros };
  };
  const getToken = issueTarget(tessera);
  const clientCredentials = clientCredentialsTarget(tessera);
  const publicUrl = ((await tessera.process.request('/.well-known/oauth-authorization-server')).json() as { issuer: string }).issuer;
  const proofs = dpopProofMaker();
  const dpopClientCredentials = dpopClientCredentialsTarget(tessera, `${publicUrl}/oauth2/token`, proofs);
  const cpuPairs: OAuthDoorResult['cpuPairs'][number][] = [];
  for (let pair = 1; pair <= options.pairs; pair += 1) {
    // The order swaps each pair, so neither side always runs on a log the other just grew.
    if (pair % 2 === 1) {
      const v5 = await cpu(`get-oauth-token (oauth pair ${pair})`, getToken);
      const oauth = await cpu(`client_credentials (oauth pair ${pair})`, clientCredentials);
      cpuPairs.push({ getToken: v5, clientCredentials: oauth, dpopClientCredentials: await cpu(`client_credentials with DPoP (oauth pair ${pair})`, dpopClientCredentials) });
    } else {
      const dpop = await cpu(`client_credentials with DPoP (oauth pair ${pair})`, dpopClientCredentials);
      const oauth = await cpu(`client_credentials (oauth pair ${pair})`, clientCredentials);
      cpuPairs.push({ getToken: await cpu(`get-oauth-token (oauth pair ${pair})`, getToken), clientCredentials: oauth, dpopClientCredentials: dpop });
    }
  }
  const fullLoad: OAuthDoorResult['fullLoad'][number][] = [];
  for (const connections of options.connections) {
    fullLoad.push({
      connections,
      getToken: await full(`get-oauth-token at ${connections} connections`, getToken, connections),
      clientCredentials: await full(`client_credentials at ${connections} connections`, clientCredentials, connections),
    });
  }
  const gateway = await tessera.process.createAccount({ name: 'bench gateway', permissions: ['tessera:introspect'] });
  const accessToken = await freshAccessToken(tessera);
  const introspect = introspectionTarget(tessera, gateway, accessToken);
  // The figure is for active answers, the costly kind: a token the endpoint would call inactive early is no measure.
  const probe = await tessera.process.request('/oauth2/introspect', { method: 'POST', headers: { ...introspect.headers }, body: introspect.body as string });
  if (probe.status !== 200 || !probe.text.includes('"active":true')) throw new Error(`introspection answered ${probe.status} ${probe.text.slice(0, 80)}`);
  const introspection = { cpu: await cpu('introspection', introspect), load: await full('introspection at 50 connections', introspect, 50) };
  const verification = await cpu('POST /v5/Transaction/charge (bearer), beside introspection', chargeTarget(tessera, accessToken));
  const boundToken = await tessera.process.request('/oauth2/token', {
    method: 'POST',
    headers: { ...(dpopClientCredentials.headers as Record<string, string>), dpop: proofs.proof('POST', `${publicUrl}/oauth2/token`) },
    body: 'grant_type=client_credentials',
  });
  if (boundToken.status !== 200) throw new Error(`a DPoP-bound token request answered ${boundToken.status} ${boundToken.text.slice(0, 80)}`);
  const dpopCharge = dpopChargeTarget(tessera, publicUrl, (boundToken.json() as { access_token: string }).access_token, proofs);
  const dpopVerification = await cpu('POST /v5/Transaction/charge (DPoP), beside the bearer one', dpopCharge);

  // The peers, one at a time on Tessera's core while Tessera idles there, as in the http part.
  const pinned = options.cpuList !== undefined ? { cpuList: options.cpuList } : {};
  const oidc = await startOidcProviderPeer({ alg: options.oidcAlg, tlsFiles: tessera.tlsFiles, ...pinned });
  let oidcProvider: OAuthDoorResult['oidcProvider'];
  try {
    options.onPeer?.(`oidc-provider ${options.oidcAlg}`, oidc.pid);
    const runs: OAuthDoorResult['oidcProvider']['fullLoad'][number][] = [];
    for (const connections of options.connections) {
      runs.push({ connections, clientCredentials: await full(`oidc-provider ${options.oidcAlg} client_credentials at ${connections} connections`, oidc.issue, connections, oidc.pid) });
    }
    oidcProvider = { alg: options.oidcAlg, fullLoad: runs };
  } finally {
    await oidc.stop();
  }

  const found = findHydra();
  let hydra: OAuthDoorResult['hydra'];
  if ('reason' in found) {
    progress(`HYDRA PEER SKIPPED: ${found.reason}`);
    hydra = { skipped: found.reason };
  } else {
    const runs: HydraRun[] = [];
    for (const hashing of ['default', 'cheapest'] as const) {
      const settings = hydraHashingSettings[hashing].describe;
      const peer = await startHydraPeer({ binary: found.binary, version: found.version, hashing, tlsFiles: tessera.tlsFiles, ...pinned });
      try {
        options.onPeer?.(`Hydra (${hashing} hashing)`, peer.pid);
        const fullLoadRuns: HydraRun['fullLoad'][number][] = [];
        for (const connections of options.connections) {
          fullLoadRuns.push({ connections, clientCredentials: await full(`Hydra ${found.version} client_credentials, ${settings}, at ${connections} connections`, peer.issue, connections, peer.pid) });
        }
        const token = await peer.accessToken();
        // Hydra picks its signing algorithm itself; the report states the one its token carries
        // (a JWS header is a JSON object; JSON.parse gives no type, and only alg is read).
        const signingAlg = (JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as { alg?: string }).alg ?? '?';
        let hydraIntrospection: HydraRun['introspection'];
        if (hashing === 'default') {
          const answer = await peer.introspect(token);
          if (answer.status !== 200 || !answer.text.includes('"active":true')) throw new Error(`Hydra's introspection answered ${answer.status} ${answer.text.slice(0, 80)}`);
          const target = peer.introspection(token);
          const measuredCpu = await measureCpuPerOperation(target, peer.pid, cpuOptions);
          progress(describeCpu(`Hydra ${found.version} admin introspection`, measuredCpu));
          hydraIntrospection = { cpu: measuredCpu, load: await full(`Hydra ${found.version} admin introspection at 50 connections`, target, 50, peer.pid) };
        }
        runs.push({ hashing, settings, signingAlg, fullLoad: fullLoadRuns, ...(hydraIntrospection ? { introspection: hydraIntrospection } : {}) });
      } finally {
        await peer.stop();
      }
    }
    hydra = { version: found.version, dsn: hydraDsnDescription, strategy: 'strategies.access_token=jwt', runs };
  }
  return { cpuPairs, fullLoad, introspection, verification, dpopVerification, oidcProvider, hydra };
}

/** The peers' settings, for the lines above the table. */
export function describeOAuthPeers(result: OAuthDoorResult): string[] {
  const lines = [`OAuth door peers: oidc-provider ${result.oidcProvider.alg} client_credentials (in-memory adapter), pinned like Tessera`];
  if ('skipped' in result.hydra) lines.push(`Ory Hydra NOT measured: ${result.hydra.skipped}`);
  else {
    for (const run of result.hydra.runs) {
      lines.push(`Ory Hydra ${result.hydra.version}: hydra serve all, DSN ${result.hydra.dsn}, ${result.hydra.strategy} (${run.signingAlg}, its generated key), client_secret_basic, client secrets hashed with ${run.settings}; log level info, HTTPS with Tessera's certificate`);
    }
  }
  return lines;
}

export function oauthDoorRows(result: OAuthDoorResult): Row[] {
  const ratios = result.cpuPairs.map((pair) => pair.clientCredentials.microsPerOperation / pair.getToken.microsPerOperation);
  const ratio = median(ratios);
  const cpuTarget = atMost(ratio, 1.05, '×');
  const rows: Row[] = [
    {
      what: `server CPU µs per client_credentials issuance at the fixed rate, median of ${ratios.length} pairs in turn (${ratios.map((r) => r.toFixed(2)).join(', ')}; peer: get-oauth-token, same process)`,
      tessera: median(result.cpuPairs.map((pair) => pair.clientCredentials.microsPerOperation)),
      peer: median(result.cpuPairs.map((pair) => pair.getToken.microsPerOperation)),
      ratio: Number(ratio.toFixed(2)),
      target: '≤ 1.05×',
      met: cpuTarget.met,
      distance: cpuTarget.distance,
    },
  ];
  const dpopRatios = result.cpuPairs.map((pair) => pair.dpopClientCredentials.microsPerOperation / pair.clientCredentials.microsPerOperation);
  rows.push(
    {
      what: `  server CPU µs per DPoP-bound client_credentials issuance, a fresh proof each, median of ${dpopRatios.length} runs in turn (${dpopRatios.map((r) => r.toFixed(2)).join(', ')}; peer: Bearer client_credentials)`,
      tessera: median(result.cpuPairs.map((pair) => pair.dpopClientCredentials.microsPerOperation)),
      peer: median(result.cpuPairs.map((pair) => pair.clientCredentials.microsPerOperation)),
      ratio: Number(median(dpopRatios).toFixed(2)),
      target: '',
      met: '—',
    },
    {
      what: '  server CPU µs per DPoP-checked protected request, a fresh proof each (peer: the same request with a Bearer token)',
      tessera: result.dpopVerification.microsPerOperation,
      peer: result.verification.microsPerOperation,
      ratio: Number((result.dpopVerification.microsPerOperation / result.verification.microsPerOperation).toFixed(2)),
      target: '',
      met: '—',
    },
  );
  for (const point of result.fullLoad) {
    rows.push({
      what: `  client_credentials req/s at ${point.connections} connections (peer: get-oauth-token)`,
      tessera: Math.round(point.clientCredentials.reqPerSec),
      peer: Math.round(point.getToken.reqPerSec),
      ratio: Number((point.clientCredentials.reqPerSec / point.getToken.reqPerSec).toFixed(2)),
      target: '',
      met: '—',
    });
  }
  const ratioOf = (ours: number, theirs: number) => Number((ours / theirs).toFixed(2));
  const oidcName = `oidc-provider ${result.oidcProvider.alg} client_credentials`;
  for (const point of result.fullLoad) {
    const peer = result.oidcProvider.fullLoad.find((p) => p.connections === point.connections)?.clientCredentials;
    if (!peer) continue;
    rows.push(
      {
        what: `  client_credentials req/s at ${point.connections} connections (peer: ${oidcName})`,
        tessera: Math.round(point.clientCredentials.reqPerSec),
        peer: Math.round(peer.reqPerSec),
        ratio: ratioOf(point.clientCredentials.reqPerSec, peer.reqPerSec),
        target: '',
        met: '—',
      },
      {
        what: `    beside it: get-oauth-token req/s at ${point.connections} connections (same peer run)`,
        tessera: Math.round(point.getToken.reqPerSec),
        peer: Math.round(peer.reqPerSec),
        ratio: ratioOf(point.getToken.reqPerSec, peer.reqPerSec),
        target: '',
        met: '—',
      },
      {
        what: `    server CPU µs per client_credentials at ${point.connections} connections, full load (peer: ${oidcName})`,
        tessera: point.clientCredentials.serverCpuMicros,
        peer: peer.serverCpuMicros,
        ratio: ratioOf(point.clientCredentials.serverCpuMicros, peer.serverCpuMicros),
        target: '',
        met: '—',
      },
    );
  }
  if ('skipped' in result.hydra) {
    rows.push({ what: '  client_credentials req/s at 50 connections (peer: Ory Hydra)', tessera: '', peer: 'not measured', ratio: '', target: '≥ 3×', met: false, distance: result.hydra.skipped.slice(0, 80) });
  } else {
    for (const run of result.hydra.runs) {
      const name = `Hydra ${result.hydra.version}, ${run.hashing === 'default' ? 'default pbkdf2 25,000' : 'cheapest: pbkdf2 1 iteration'}`;
      for (const point of result.fullLoad) {
        const peer = run.fullLoad.find((p) => p.connections === point.connections)?.clientCredentials;
        if (!peer) continue;
        const ratio = point.clientCredentials.reqPerSec / peer.reqPerSec;
        // The target is against Hydra as shipped: its default hashing is what a deployment of it pays.
        const judged = run.hashing === 'default' && point.connections === 50 ? atLeast(ratio, 3, '×') : undefined;
        rows.push(
          {
            what: `  client_credentials req/s at ${point.connections} connections (peer: ${name})`,
            tessera: Math.round(point.clientCredentials.reqPerSec),
            peer: Math.round(peer.reqPerSec),
            ratio: ratioOf(point.clientCredentials.reqPerSec, peer.reqPerSec),
            target: judged ? '≥ 3×' : '',
            met: judged ? judged.met : '—',
            ...(judged ? { distance: judged.distance } : {}),
          },
          {
            what: `    server CPU µs per client_credentials at ${point.connections} connections, full load (peer: ${name})`,
            tessera: point.clientCredentials.serverCpuMicros,
            peer: peer.serverCpuMicros,
            ratio: ratioOf(point.clientCredentials.serverCpuMicros, peer.serverCpuMicros),
            target: '',
            met: '—',
          },
        );
      }
    }
  }
  const hydraIntrospection = 'skipped' in result.hydra ? undefined : result.hydra.runs.find((run) => run.introspection)?.introspection;
  const introspectionRatio = hydraIntrospection ? result.introspection.load.reqPerSec / hydraIntrospection.load.reqPerSec : Number.NaN;
  const introspectionTarget = atLeast(introspectionRatio, 1.5, '×');
  const hydraIntrospectionCpu: Row[] = hydraIntrospection
    ? [
        {
          what: '    server CPU µs per introspection at the fixed rate (peer: Hydra admin introspection)',
          tessera: result.introspection.cpu.microsPerOperation,
          peer: hydraIntrospection.cpu.microsPerOperation,
          ratio: ratioOf(result.introspection.cpu.microsPerOperation, hydraIntrospection.cpu.microsPerOperation),
          target: '',
          met: '—',
        },
      ]
    : [];
  rows.push(
    {
      what: `  introspection (RFC 7662, an active access token) req/s at 50 connections (peer: Hydra's /admin/oauth2/introspect, its own JWT)`,
      tessera: Math.round(result.introspection.load.reqPerSec),
      peer: hydraIntrospection ? Math.round(hydraIntrospection.load.reqPerSec) : 'not measured',
      ratio: hydraIntrospection ? ratioOf(result.introspection.load.reqPerSec, hydraIntrospection.load.reqPerSec) : '',
      target: '≥ 1.5×',
      met: introspectionTarget.met,
      distance: introspectionTarget.distance,
    },
    ...hydraIntrospectionCpu,
    {
      what: '  server CPU µs per introspection at the fixed rate (peer: a protected request with the same token)',
      tessera: result.introspection.cpu.microsPerOperation,
      peer: result.verification.microsPerOperation,
      ratio: Number((result.introspection.cpu.microsPerOperation / result.verification.microsPerOperation).toFixed(2)),
      target: '',
      met: '—',
    },
  );
  return rows;
}
