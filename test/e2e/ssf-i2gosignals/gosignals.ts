import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { until } from '../../support/until.js';

/**
 * i2goSignals as the e2e runs it: its server (goSignalsServer, in-memory store: no MONGO_URL) as
 * the receiver, and its goSignals CLI making the streams, both trusting Tessera's certificate
 * through SSL_CERT_FILE. What the server received is read from what it says: its Prometheus
 * counter of events in, by stream and type, and its debug log of each inbound SET, decoded.
 */

/** Tokens never reach a log or an error message: JWTs (i2goSignals' own) and Tessera's receiver tokens. */
export function redact(text: string): string {
  return text.replace(/eyJ[\w-]+\.[\w-]+\.[\w-]*/g, '<jwt>').replace(/tss_[\w-]+/g, '<receiver token>');
}

/** One SET the server logged as received, with the i2goSignals stream that received it. */
export interface InboundSet {
  readonly streamId: string;
  readonly jti: string;
  readonly aud: string[];
  readonly sub_id: Record<string, unknown>;
  readonly events: Record<string, Record<string, unknown>>;
}

export class GoSignalsServer {
  private output = '';
  readonly url: string;
  readonly process: ChildProcess;
  private readonly bootstrapToken = randomBytes(24).toString('base64url');

  /** It listens on every interface (it takes only a port); its bootstrap secret is drawn anew for each run. */
  constructor(binary: string, port: number, workDir: string, caFile: string) {
    this.url = `http://127.0.0.1:${port}`;
    mkdirSync(workDir, { recursive: true });
    // It keeps its in-memory store's snapshots under its working folder (config/ssef).
    this.process = spawn(binary, [], {
      cwd: workDir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PORT: String(port), BASE_URL: `${this.url}/`, I2SIG_BOOTSTRAP_TOKEN: this.bootstrapToken, LOG_LEVEL: 'debug', SSL_CERT_FILE: caFile },
    });
    this.process.stdout!.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
    this.process.stderr!.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
  }

  logs(): string {
    return this.output;
  }

  async ready(): Promise<void> {
    await until(async () => (await fetch(`${this.url}/.well-known/ssf-configuration`).catch(() => undefined))?.status === 200, `goSignalsServer to answer (its log: ${redact(this.output.slice(-2000))})`);
  }

  /**
   * A client token with stream scopes: an IAT by the bootstrap secret, then a registration with
   * it, as i2goSignals' own tests do. Both answers are i2goSignals' `{"token": …}`.
   */
  async clientToken(): Promise<string> {
    const iat = (await (await fetch(`${this.url}/iat`, { headers: { authorization: `Bearer ${this.bootstrapToken}` } })).json()) as { token: string };
    const registered = await fetch(`${this.url}/register`, {
      method: 'POST',
      headers: { authorization: `Bearer ${iat.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ description: 'Tessera e2e' }),
    });
    if (registered.status !== 200) throw new Error(`goSignalsServer refused the registration: ${registered.status}`);
    return ((await registered.json()) as { token: string }).token;
  }

  /** goSignals_router_events_in_total for one of its streams, by event type. */
  async eventsIn(streamId: string): Promise<Record<string, number>> {
    const metrics = await (await fetch(`${this.url}/metrics`)).text();
    const counts: Record<string, number> = {};
    for (const match of metrics.matchAll(/^goSignals_router_events_in_total\{([^}]*)\} (\d+)$/gm)) {
      const labels = Object.fromEntries([...match[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((label) => [label[1]!, label[2]!]));
      if (labels.stream_id === streamId) counts[labels.type!] = Number(match[2]);
    }
    return counts;
  }

  /**
   * The SETs it logged as received: its router logs "Event counter incremented" with the stream
   * id, then "Inbound token" with the SET's claims (Go-quoted JSON), one after the other.
   */
  inbound(): InboundSet[] {
    const sets: InboundSet[] = [];
    let streamId: string | undefined;
    for (const line of this.output.split('\n')) {
      const counted = /msg="Event counter incremented" .*dir=In sid=(\S+)/.exec(line);
      if (counted) streamId = counted[1];
      const token = /msg="Inbound token" .*token=("(?:[^"\\]|\\.)*")/.exec(line);
      if (token && streamId !== undefined) {
        // A Go-quoted string is a JSON string; inside it, the SET's claims as JSON.
        const claims = JSON.parse(JSON.parse(token[1]!) as string) as Omit<InboundSet, 'streamId'>;
        sets.push({ ...claims, streamId });
        streamId = undefined;
      }
    }
    return sets;
  }

  /** Its poll receiver's log lines for one stream, in order. */
  pollLog(streamId: string): string[] {
    return this.output.split('\n').filter((line) => line.includes('POLL-RCV') && line.includes(`sid=${streamId}`));
  }
}

export interface CliStream {
  readonly id: string;
  readonly endpoint: string;
  readonly token: string;
  readonly aud: string;
}

export class GoSignalsCli {
  constructor(
    private readonly binary: string,
    private readonly home: string,
    private readonly caFile: string,
  ) {
    mkdirSync(home, { recursive: true });
  }

  /** One command, answering its "Proceed Y|[n]?" with Y. It prints tokens: its output is kept, redacted, for a failure's message only. */
  run(args: string[]): Promise<string> {
    return new Promise((resolveRun, rejectRun) => {
      const cli = spawn(this.binary, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, GOSIGNALS_HOME: this.home, SSL_CERT_FILE: this.caFile } });
      let output = '';
      cli.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      cli.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      cli.stdin.end('Y\n');
      const timer = setTimeout(() => cli.kill('SIGKILL'), 60_000);
      cli.on('close', (code) => {
        clearTimeout(timer);
        const command = redact(args.join(' '));
        if (code === 0) resolveRun(redact(output));
        else rejectRun(new Error(`goSignals ${command} exited ${code}: ${redact(output)}`));
      });
    });
  }

  /** A stream the CLI recorded in its configuration (config.json), by server and stream alias. */
  stream(serverAlias: string, streamAlias: string): CliStream {
    // The CLI's own file (cast: the members read): servers by alias, each with its streams by alias.
    const configuration = JSON.parse(readFileSync(join(this.home, 'config.json'), 'utf8')) as { Servers: Record<string, { Streams: Record<string, CliStream> }> };
    const stream = configuration.Servers[serverAlias]?.Streams[streamAlias];
    if (!stream) throw new Error(`the goSignals CLI recorded no stream ${streamAlias} on ${serverAlias}`);
    return stream;
  }
}
