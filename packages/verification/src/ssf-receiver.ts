import { randomBytes } from 'node:crypto';
import { systemClock } from '@tessera/timing';
import { RevocationProjection, type RevocationFacts } from './revocation-projection.js';
import { withRetries } from './ssf-backoff.js';
import { runPollLoop } from './ssf-poll-loop.js';
import { answerPush, type PushAnswer } from './ssf-push-answer.js';
import { defaultEventsRequested, MalformedSet, meaningOfSet, SetRefused } from './ssf-set-mapping.js';
import { createSetVerifier, type SetOutcome, type SetVerifier } from './ssf-set-verification.js';
import { RevocationStateFile, type StreamPosition } from './ssf-state-file.js';
import { TransmitterClient, TransmitterRefused, type StreamConfiguration, type Subject, type TransmitterConfiguration } from './ssf-transmitter.js';

const pollMethod = 'urn:ietf:rfc:8936';
const pushMethod = 'urn:ietf:rfc:8935';

/** How SETs reach the receiver: it polls the transmitter (RFC 8936), or the transmitter pushes them to a route of this service (RFC 8935). */
export type SsfDelivery =
  | { readonly method: 'poll' }
  | {
      readonly method: 'push';
      /** The URL the transmitter POSTs SETs to: this service's push route, as the transmitter reaches it (the SETs' `aud`). */
      readonly endpointUrl: string;
      /** The `Authorization` header value the transmitter sends with each SET (`Bearer <a secret of this service>`); checked on every push. */
      readonly authorizationHeader: string;
    };

/** What `createSsfReceiver` takes: where the transmitter is, the receiver token, the delivery and the subjects; the rest has defaults. */
export interface SsfReceiverOptions {
  /** The transmitter's base URL: Tessera's TESSERA_PUBLIC_URL, where `/.well-known/ssf-configuration` is. */
  readonly transmitterUrl: string;
  /** The receiver token from `npx tessera ssf-receivers create --json` or `POST /admin/v1/ssf/receivers`. A secret: never logged. */
  readonly receiverToken: string;
  /** Polled, or pushed to `endpointUrl` with `authorizationHeader`. */
  readonly delivery: SsfDelivery;
  /** A stream made earlier; unset, the one recorded in `stateFile`, or else a new one. */
  readonly streamId?: string;
  /** Whose revocations to hear: accounts (`iss_sub`, every family of the account) and single families (`opaque`, an access token's `fid`). */
  readonly subjects?: { readonly accounts?: readonly string[]; readonly families?: readonly string[] };
  /** The event types asked for when the stream is made; by default the revocations and `urn:tessera:secevent:token-rotated`. */
  readonly eventsRequested?: readonly string[];
  /** The projection to feed; by default a new one (`receiver.projection`). */
  readonly projection?: RevocationProjection;
  /**
   * Where applied revocations (until every token they refuse has expired) and the stream followed
   * are kept, so a restart refuses what was refused before and resumes the same stream. Unset: a
   * restart forgets every revocation heard, and makes a new stream, which gets only what happens after.
   */
  readonly stateFile?: string;
  /** The transmitter's longest access-token lifetime (TESSERA_ACCESS_TOKEN_TTL), for a SET without `tessera_rejects_until`. Default 3600. */
  readonly maxAccessTokenLifetimeSeconds?: number;
  /** The projection's clock skew, when this receiver makes it; also kept past expiry in the state file. Default 60. */
  readonly clockSkewSeconds?: number;
  /** The largest pushed SET taken, in bytes. Default 65536. */
  readonly maxSetBytes?: number;
  /** SETs asked for per poll. Default 100. */
  readonly maxEventsPerPoll?: number;
  /** At most one JWKS load per this many milliseconds for SETs naming an unknown `kid`. Default 5000. */
  readonly keyRefreshCooldownMs?: number;
  /** For a transmitter behind a private CA on Node 20 (whose fetch takes none), or for tests. Default the global fetch. */
  readonly fetch?: typeof fetch;
  /** Told of each failure the receiver recovers from by itself (a poll refused, the transmitter unreachable, a SET refused). */
  readonly onError?: (error: Error) => void;
}

/** A running receiver: the projection it feeds, its readiness, and what the push handlers call. */
export interface SsfReceiver {
  /** The projection it feeds: give it to `createBearerVerifier({ projection })`. */
  readonly projection: RevocationProjection;
  /** Resolves once the state file is loaded and the first catch-up is done (poll: a poll answered `moreAvailable: false` after the stream was verified; push: the verification SET pushed). */
  readonly ready: Promise<void>;
  /** The stream followed, once known. */
  readonly streamId: string | undefined;
  /** For the push handlers: one pushed request's Authorization header, Content-Type and body. */
  receivePush(pushed: { readonly authorization: string | undefined; readonly contentType: string | undefined; readonly body: string }): Promise<PushAnswer>;
  /** The largest pushed body taken, in bytes (the handlers stop reading past it). */
  readonly maxSetBytes: number;
  /** Stops polling and closes the state file; resolves once nothing more is written. A `ready` still pending rejects with an AbortError. */
  close(): Promise<void>;
}

/**
 * A Shared Signals receiver (SSF 1.0, RFC 8935 and 8936) that feeds a RevocationProjection from
 * Tessera's transmitter: what lets a service that is not on Kafka refuse revoked and replaced
 * access tokens. It makes (or resumes) a stream, adds its subjects, verifies the stream, and then
 * polls, or takes pushes through `ssfPushHandler`, `ssfPushMiddleware` or `ssfPushRoute`.
 */
export function createSsfReceiver(options: SsfReceiverOptions): SsfReceiver {
  const fetchFn = options.fetch ?? fetch;
  const clockSkewSeconds = options.clockSkewSeconds ?? 60;
  const projection = options.projection ?? new RevocationProjection({ clockSkewSeconds });
  const nowSeconds = () => Math.floor(systemClock.now() / 1000);
  const stateFile = options.stateFile === undefined ? undefined : new RevocationStateFile(options.stateFile, clockSkewSeconds, nowSeconds);
  const transmitter = new TransmitterClient(options.transmitterUrl, options.receiverToken, fetchFn);
  const mapping = { maxAccessTokenLifetimeSeconds: options.maxAccessTokenLifetimeSeconds ?? 3600 };
  const maxSetBytes = options.maxSetBytes ?? 65_536;
  const reportError = (error: unknown) => options.onError?.(error instanceof Error ? error : new Error(String(error)));
  const closing = new AbortController();

  let stream: StreamPosition | undefined;
  let verifier: SetVerifier | undefined;
  const verificationState = randomBytes(16).toString('base64url');
  let verified = false;
  let onVerified: () => void = () => undefined;
  const streamVerified = new Promise<void>((resolveVerified) => (onVerified = resolveVerified));
  // Entries whose tokens have all expired are dropped once a minute; the timer never keeps the process up.
  const forgetting = setInterval(() => projection.forgetExpired(nowSeconds()), 60_000);
  forgetting.unref();

  /** Verifies, maps, applies and persists one SET; only an `applied` one is acknowledged. */
  async function handleSet(token: string): Promise<SetOutcome> {
    if (verifier === undefined || stream === undefined) return { applied: false, err: 'access_denied', description: 'the receiver is starting' };
    const checked = await verifier.verify(token, stream.aud);
    if (!checked.ok) {
      reportError(new SetRefused(`a SET was refused: ${checked.err} (${checked.description})`));
      return { applied: false, err: checked.err, description: checked.description };
    }
    let revocations: readonly RevocationFacts[];
    try {
      const meaning = meaningOfSet(checked.claims, mapping);
      revocations = meaning.revocations;
      if (meaning.verificationState === verificationState && !verified) {
        verified = true;
        onVerified();
      }
    } catch (error) {
      if (error instanceof MalformedSet) return { applied: false, err: 'invalid_request', description: error.message };
      throw error;
    }
    for (const revocation of revocations) projection.apply(revocation);
    await stateFile?.append(revocations);
    return { applied: true };
  }

  async function start(): Promise<void> {
    if (stateFile) {
      const saved = await stateFile.load();
      for (const revocation of saved.revocations) projection.apply(revocation);
      stream = saved.stream;
    }
    const configuration = await withRetries(() => transmitter.configuration(), closing.signal, reportError);
    verifier = createSetVerifier({ jwksUri: configuration.jwks_uri, issuer: configuration.issuer, fetch: fetchFn, keyRefreshCooldownMs: options.keyRefreshCooldownMs ?? 5_000 });
    await withRetries(() => verifier!.load(), closing.signal, reportError);
    stream = await withRetries(() => followedStream(configuration), closing.signal, reportError);
    await withRetries(() => addSubjects(configuration), closing.signal, reportError);
    await withRetries(() => transmitter.requestVerification(configuration.verification_endpoint, stream!.streamId, verificationState), closing.signal, reportError);
  }

  /** The configured stream, the one the state file recorded, or a new one (recorded before anything else happens). */
  async function followedStream(configuration: TransmitterConfiguration): Promise<StreamPosition> {
    if (options.streamId !== undefined) return positionOf(await transmitter.readStream(configuration.configuration_endpoint, options.streamId));
    if (stream !== undefined && sameDelivery(stream)) {
      try {
        return positionOf(await transmitter.readStream(configuration.configuration_endpoint, stream.streamId));
      } catch (error) {
        // The recorded stream was deleted at the transmitter: a new one is made (a configured one is never replaced).
        if (!(error instanceof TransmitterRefused && error.status === 404)) throw error;
      }
    }
    const delivery =
      options.delivery.method === 'poll'
        ? { method: pollMethod }
        : { method: pushMethod, endpoint_url: options.delivery.endpointUrl, authorization_header: options.delivery.authorizationHeader };
    const created = positionOf(
      await transmitter.createStream(configuration.configuration_endpoint, {
        delivery,
        events_requested: options.eventsRequested ?? defaultEventsRequested,
        description: 'revocations for a @tessera/verification receiver',
      }),
    );
    await stateFile?.rememberStream(created);
    return created;
  }

  const sameDelivery = (position: StreamPosition) => (options.delivery.method === 'poll') === (position.pollUrl !== undefined);

  async function addSubjects(configuration: TransmitterConfiguration): Promise<void> {
    const subjects: Subject[] = [
      ...(options.subjects?.accounts ?? []).map((sub): Subject => ({ format: 'iss_sub', iss: configuration.issuer, sub })),
      ...(options.subjects?.families ?? []).map((id): Subject => ({ format: 'opaque', id })),
    ];
    // Adding a subject the stream has already is accepted again, so a restart adds them all.
    for (const subject of subjects) await transmitter.addSubject(configuration.add_subject_endpoint, stream!.streamId, subject);
  }

  const started = start();
  const polling =
    options.delivery.method === 'poll'
      ? started.then(() =>
          runPollLoop({
            transmitter,
            pollUrl: stream!.pollUrl!,
            maxEvents: options.maxEventsPerPoll ?? 100,
            handleSet,
            isVerified: () => verified,
            signal: closing.signal,
            reportError,
          }),
        )
      : undefined;
  // Poll: the first poll answered `moreAvailable: false` once the stream is verified. Push: the verification SET itself.
  const caughtUp = polling === undefined ? streamVerified : polling.then((loop) => loop.caughtUp);
  // Its failure is the start's, which `ready` carries.
  caughtUp.catch(() => undefined);
  // Closed before it was ready: `ready` rejects (with the abort's reason) rather than staying pending for ever.
  const closed = new Promise<never>((_resolve, reject) => closing.signal.addEventListener('abort', () => reject(closing.signal.reason), { once: true }));
  const ready = Promise.race([started.then(() => caughtUp), closed]);
  // A failure reaches whoever awaits `ready`; unawaited, it is no unhandled rejection.
  ready.catch(() => undefined);
  closed.catch(() => undefined);

  return {
    projection,
    ready,
    maxSetBytes,
    get streamId() {
      return stream?.streamId;
    },
    receivePush: (pushed) => answerPush(pushed, options.delivery, maxSetBytes, handleSet),
    async close() {
      closing.abort();
      clearInterval(forgetting);
      await started.catch(() => undefined);
      await polling?.then((loop) => loop.finished).catch(() => undefined);
      await stateFile?.close();
    },
  };
}

function positionOf(configuration: StreamConfiguration): StreamPosition {
  const aud = Array.isArray(configuration.aud) ? configuration.aud[0] : configuration.aud;
  if (typeof aud !== 'string') throw new TransmitterRefused(200, `the stream ${configuration.stream_id} has no aud`);
  const pollUrl = configuration.delivery.method === pollMethod ? configuration.delivery.endpoint_url : undefined;
  return { streamId: configuration.stream_id, aud, ...(pollUrl === undefined ? {} : { pollUrl }) };
}
