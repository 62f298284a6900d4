/**
 * The OAuth 2.0 door's cost beside the spec's interface, on one Tessera process: server CPU per
 * client_credentials issuance against get-oauth-token's in the same run (pairs in turn, the order
 * swapped each pair), both at full load at two connection counts, and introspection (RFC 7662)
 * beside a protected request, whose verification it repeats plus one read of the family's last
 * event. The peers (oidc-provider's and Hydra's client_credentials) are in the http part.
 */
import { describeCpu, measureCpuPerOperation, type CpuPerOperation } from './cpu-time.js';
import { progress } from './children.js';
import { load, warmUp, type LoadResult, type LoadTarget } from './load.js';
import { atMost, describeLoad, median, type Row } from './report.js';
import { chargeTarget, freshAccessToken, issueTarget, type TesseraTarget } from './tessera-target.js';

export interface OAuthDoorOptions {
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly cpuRate: number;
  readonly cpuConnections: number;
  readonly connections: readonly number[];
  readonly pairs: number;
}

export interface OAuthDoorResult {
  readonly cpuPairs: readonly { readonly getToken: CpuPerOperation; readonly clientCredentials: CpuPerOperation }[];
  readonly fullLoad: readonly { readonly connections: number; readonly getToken: LoadResult; readonly clientCredentials: LoadResult }[];
  readonly introspection: { readonly cpu: CpuPerOperation; readonly load: LoadResult };
  readonly verification: CpuPerOperation;
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
  const full = async (name: string, target: LoadTarget, connections: number) => {
    await warmUp(target, { seconds: options.warmupSeconds, connections });
    const measured = await load(target, { seconds: options.seconds, connections });
    progress(describeLoad(name, measured));
    return measured;
  };
  const getToken = issueTarget(tessera);
  const clientCredentials = clientCredentialsTarget(tessera);
  const cpuPairs: OAuthDoorResult['cpuPairs'][number][] = [];
  for (let pair = 1; pair <= options.pairs; pair += 1) {
    // The order swaps each pair, so neither side always runs on a log the other just grew.
    if (pair % 2 === 1) {
      const v5 = await cpu(`get-oauth-token (oauth pair ${pair})`, getToken);
      cpuPairs.push({ getToken: v5, clientCredentials: await cpu(`client_credentials (oauth pair ${pair})`, clientCredentials) });
    } else {
      const oauth = await cpu(`client_credentials (oauth pair ${pair})`, clientCredentials);
      cpuPairs.push({ getToken: await cpu(`get-oauth-token (oauth pair ${pair})`, getToken), clientCredentials: oauth });
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
  return { cpuPairs, fullLoad, introspection, verification };
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
  rows.push(
    {
      what: '  introspection (RFC 7662, an active access token) req/s at 50 connections',
      tessera: Math.round(result.introspection.load.reqPerSec),
      peer: '',
      ratio: '',
      target: '',
      met: '—',
    },
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
