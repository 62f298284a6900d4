import { randomUUID } from 'node:crypto';
import { ssfStreams, streams, type EventMetadata, type SsfDelivery, type SsfStreamConfiguration, type SsfStreamStatus, type SsfSubject } from '@tessera/events';
import { handleCommand, type CommandStore } from '@tessera/event-store';
import { deliveryMethods, eventsByDefault, eventsSupported } from './event-types.js';
import type { PushEgress } from './delivery/push-client.js';
import type { HeaderSeal } from './sealed-header.js';
import { decideStream, snapshotReadBack, startsStreamFold, streamDecider, type LiveStream, type StreamCommand } from './stream-decider.js';
import type { StreamDirectory } from './stream-directory.js';
import { InvalidSsfRequest, SsfStreamLimitReached, SsfStreamNotFound, SsfSubjectOutOfScope } from './ssf-errors.js';
import type { CreateStreamRequest, DeliveryRequest, ReplaceStreamRequest, StreamConfiguration, SubjectIdentifier, UpdateStreamRequest } from './stream-wire.js';

export interface StreamManagementDeps {
  readonly store: CommandStore;
  readonly directory: StreamDirectory;
  readonly seal: HeaderSeal;
  /**
   * The transmitter's issuer (TESSERA_PUBLIC_URL): SETs' iss, the iss_sub subjects' iss, the base of
   * its URLs. Read per request: its default follows the port the listener bound.
   */
  readonly issuer: () => string;
  /** What a push endpoint may name: the egress policy, and TESSERA_SSF_ALLOW_HTTP_PUSH. */
  readonly egress: PushEgress;
  /** Epoch seconds. */
  readonly now: () => number;
  /** The accounts a receiver may follow (undefined: every account). */
  readonly scopeOf: (receiverId: string) => ReadonlySet<string> | undefined;
  /** TESSERA_SSF_MAX_STREAMS_PER_RECEIVER. */
  readonly maxStreamsPerReceiver: number;
  /** TESSERA_SSF_MIN_VERIFICATION_INTERVAL, seconds: the streams' min_verification_interval. */
  readonly minVerificationIntervalSeconds: number;
}

/** Where a request came from, for the audit trail. */
export interface RequestAudit {
  readonly requestId: string;
  readonly sourceAddress: string;
}

/** The audience a stream's SETs carry: the push endpoint, or the receiver for a polled stream. */
export function audienceOf(stream: { readonly receiverId: string; readonly configuration: SsfStreamConfiguration }): string {
  const { delivery } = stream.configuration;
  return delivery.method === 'push' ? delivery.endpointUrl : `urn:tessera:ssf:receiver:${stream.receiverId}`;
}

export const pollPath = (streamId: string) => `/ssf/poll?stream_id=${encodeURIComponent(streamId)}`;

/**
 * Stream management (SSF 1.0 section 8.1) for one authenticated receiver at a time: every change
 * is one command on the stream's own stream through the decider, and its answer is read back from
 * the directory once the process has applied it. Bad input throws a coded error before anything
 * is appended.
 */
export function createStreamManagement(deps: StreamManagementDeps) {
  const { store, directory, seal, issuer } = deps;

  function configurationOf(stream: LiveStream): StreamConfiguration {
    const { configuration } = stream;
    return {
      stream_id: stream.streamId,
      iss: issuer(),
      aud: audienceOf(stream),
      events_supported: [...eventsSupported],
      events_requested: configuration.eventsRequested,
      events_delivered: configuration.eventsDelivered,
      min_verification_interval: deps.minVerificationIntervalSeconds,
      // The authorization header is never returned: it is the receiver's secret.
      delivery:
        configuration.delivery.method === 'push'
          ? { method: deliveryMethods.push, endpoint_url: configuration.delivery.endpointUrl }
          : { method: deliveryMethods.poll, endpoint_url: `${issuer()}${pollPath(stream.streamId)}` },
      ...(configuration.description === undefined ? {} : { description: configuration.description }),
    };
  }

  function deliveryOf(streamId: string, requested: DeliveryRequest, current: SsfDelivery | undefined): SsfDelivery {
    if (requested.method === deliveryMethods.poll) return { method: 'poll' };
    const endpoint = URL.canParse(requested.endpoint_url) ? new URL(requested.endpoint_url) : undefined;
    if (!endpoint || (endpoint.protocol !== 'https:' && endpoint.protocol !== 'http:')) throw new InvalidSsfRequest('delivery.endpoint_url', 'must be an absolute https URL');
    if (endpoint.protocol === 'http:' && !deps.egress.allowHttp && !deps.egress.policy.allowsPlainHttp(endpoint)) {
      throw new InvalidSsfRequest('delivery.endpoint_url', 'must be https (http only for a host named in TESSERA_EGRESS_ALLOW, or with TESSERA_SSF_ALLOW_HTTP_PUSH=true for development)');
    }
    if (endpoint.username !== '' || endpoint.password !== '') throw new InvalidSsfRequest('delivery.endpoint_url', 'must not carry credentials: use authorization_header');
    if (endpoint.hash !== '') throw new InvalidSsfRequest('delivery.endpoint_url', 'must not have a fragment');
    const header = requested.authorization_header;
    if (header !== undefined && !/^[\x20-\x7e]+$/.test(header)) throw new InvalidSsfRequest('delivery.authorization_header', 'must be printable ASCII on one line');
    const endpointUrl = endpoint.href;
    // PATCH to the same endpoint without a header keeps the one stored: reads never return it to send back.
    const kept = header === undefined && current?.method === 'push' && current.endpointUrl === endpointUrl ? current.sealedAuthorization : undefined;
    const sealedAuthorization = header !== undefined ? seal.seal(streamId, header) : kept;
    return { method: 'push', endpointUrl, ...(sealedAuthorization === undefined ? {} : { sealedAuthorization }) };
  }

  function configurationFrom(streamId: string, request: { delivery: DeliveryRequest; events_requested?: string[] | undefined; description?: string | undefined }, current?: SsfStreamConfiguration): SsfStreamConfiguration {
    const eventsRequested = [...new Set(request.events_requested ?? eventsByDefault)];
    return {
      delivery: deliveryOf(streamId, request.delivery, current?.delivery),
      eventsRequested,
      eventsDelivered: eventsSupported.filter((type) => eventsRequested.includes(type)),
      ...(request.description === undefined ? {} : { description: request.description }),
    };
  }

  async function run(streamId: string, command: (stream: LiveStream | undefined) => StreamCommand, audit: RequestAudit, receiverId: string): Promise<void> {
    const metadata: EventMetadata = { requestId: audit.requestId, sourceAddress: audit.sourceAddress, actor: `ssf-receiver:${receiverId}` };
    const { appended } = await handleCommand(store, {
      stream: ssfStreams.stream(streamId),
      decider: streamDecider,
      command: (state) => command(state.status === 'live' ? state : undefined),
      read: { fromSnapshot: { within: snapshotReadBack, startsFold: startsStreamFold } },
      metadata,
      onConflict: { retries: 3 },
    });
    if (appended) await directory.whenApplied(appended.position);
  }

  const read = (receiverId: string, streamId: string): LiveStream => {
    const stream = directory.stream(receiverId, streamId);
    if (!stream) throw new SsfStreamNotFound();
    return stream;
  };

  /**
   * The endpoint's host, resolved now, must be one the egress policy lets a push reach: not
   * loopback, link-local, private or the metadata address unless TESSERA_EGRESS_ALLOW opens it.
   * The same check runs again at every connection (a name can resolve differently later). A host
   * that does not resolve now is taken: delivery retries until it does.
   */
  async function checkEndpoint(requested: DeliveryRequest | undefined): Promise<void> {
    if (requested?.method !== deliveryMethods.push || !URL.canParse(requested.endpoint_url)) return;
    const hostname = new URL(requested.endpoint_url).hostname.replace(/^\[(.*)\]$/, '$1');
    const refusal = await new Promise<string | undefined>((resolve) => {
      deps.egress.policy.lookup(hostname, { all: true }, (error) => resolve(error !== null && (error as { reason?: unknown }).reason === 'refused' ? error.message : undefined));
    });
    if (refusal !== undefined) throw new InvalidSsfRequest('delivery.endpoint_url', `is refused by the egress policy: ${refusal} (TESSERA_EGRESS_ALLOW opens a host or range)`);
  }

  /**
   * A scoped receiver follows only its accounts and the families of those accounts: a family's
   * account is read from the newest event of its stream in this region's log. One it cannot place
   * there (unknown, or another region's) is refused the same as one of another account.
   */
  async function checkScope(receiverId: string, subject: SsfSubject): Promise<void> {
    const scope = deps.scopeOf(receiverId);
    if (scope === undefined) return;
    if (subject.kind === 'account') {
      if (!scope.has(subject.accountId)) throw new SsfSubjectOutOfScope();
      return;
    }
    const [newest] = await store.readStream(streams.family(subject.familyId), { direction: 'backwards', maxCount: 1 });
    const accountId = newest !== undefined && 'accountId' in newest.event ? newest.event.accountId : undefined;
    if (typeof accountId !== 'string' || !scope.has(accountId)) throw new SsfSubjectOutOfScope();
  }

  const subjectOf = (subject: SubjectIdentifier): SsfSubject => {
    if (subject.format === 'opaque') return { kind: 'family', familyId: subject.id };
    if (subject.iss !== issuer()) throw new InvalidSsfRequest('subject.iss', `must be this transmitter's issuer, ${issuer()}`);
    return { kind: 'account', accountId: subject.sub };
  };

  return {
    configurationOf,

    async create(receiverId: string, request: CreateStreamRequest, audit: RequestAudit): Promise<StreamConfiguration> {
      // Checked against the streams this process has read: each costs memory, a worker and metric series.
      if (directory.streamsOf(receiverId).length >= deps.maxStreamsPerReceiver) throw new SsfStreamLimitReached(deps.maxStreamsPerReceiver);
      const streamId = randomUUID();
      await checkEndpoint(request.delivery);
      const configuration = configurationFrom(streamId, request);
      await run(streamId, () => ({ type: 'CreateStream', receiverId, streamId, configuration, now: deps.now() }), audit, receiverId);
      return configurationOf(read(receiverId, streamId));
    },

    read(receiverId: string, streamId: string): StreamConfiguration {
      return configurationOf(read(receiverId, streamId));
    },

    list(receiverId: string): StreamConfiguration[] {
      return directory.streamsOf(receiverId).map(configurationOf);
    },

    async update(receiverId: string, request: UpdateStreamRequest, audit: RequestAudit): Promise<StreamConfiguration> {
      const streamId = request.stream_id;
      const current = read(receiverId, streamId).configuration;
      await checkEndpoint(request.delivery);
      const configuration = configurationFrom(
        streamId,
        {
          delivery: request.delivery ?? (current.delivery.method === 'push' ? { method: deliveryMethods.push, endpoint_url: current.delivery.endpointUrl } : { method: deliveryMethods.poll }),
          events_requested: request.events_requested ?? current.eventsRequested,
          description: request.description ?? current.description,
        },
        current,
      );
      await run(streamId, () => ({ type: 'UpdateStream', receiverId, configuration, now: deps.now() }), audit, receiverId);
      return configurationOf(read(receiverId, streamId));
    },

    async replace(receiverId: string, request: ReplaceStreamRequest, audit: RequestAudit): Promise<StreamConfiguration> {
      const streamId = request.stream_id;
      read(receiverId, streamId);
      await checkEndpoint(request.delivery);
      const configuration = configurationFrom(streamId, request);
      await run(streamId, () => ({ type: 'UpdateStream', receiverId, configuration, now: deps.now() }), audit, receiverId);
      return configurationOf(read(receiverId, streamId));
    },

    async delete(receiverId: string, streamId: string, audit: RequestAudit): Promise<void> {
      read(receiverId, streamId);
      await run(streamId, () => ({ type: 'DeleteStream', receiverId, now: deps.now() }), audit, receiverId);
    },

    status(receiverId: string, streamId: string): { stream_id: string; status: SsfStreamStatus; reason?: string } {
      const stream = read(receiverId, streamId);
      return { stream_id: streamId, status: stream.streamStatus, ...(stream.reason === undefined ? {} : { reason: stream.reason }) };
    },

    async setStatus(receiverId: string, request: { stream_id: string; status: SsfStreamStatus; reason?: string | undefined }, audit: RequestAudit) {
      read(receiverId, request.stream_id);
      await run(request.stream_id, () => ({ type: 'SetStreamStatus', receiverId, streamStatus: request.status, reason: request.reason, by: 'receiver', now: deps.now() }), audit, receiverId);
      return this.status(receiverId, request.stream_id);
    },

    async addSubject(receiverId: string, request: { stream_id: string; subject: SubjectIdentifier }, audit: RequestAudit): Promise<void> {
      const subject = subjectOf(request.subject);
      read(receiverId, request.stream_id);
      await checkScope(receiverId, subject);
      await run(request.stream_id, () => ({ type: 'AddSubject', receiverId, subject, now: deps.now() }), audit, receiverId);
    },

    async removeSubject(receiverId: string, request: { stream_id: string; subject: SubjectIdentifier }, audit: RequestAudit): Promise<void> {
      const subject = subjectOf(request.subject);
      read(receiverId, request.stream_id);
      await run(request.stream_id, () => ({ type: 'RemoveSubject', receiverId, subject, now: deps.now() }), audit, receiverId);
    },

    async verify(receiverId: string, request: { stream_id: string; state?: string | undefined }, audit: RequestAudit): Promise<void> {
      // Decided on the stream as the directory holds it, and appended apart from it, so verifications
      // never lengthen what every command on the stream reads.
      const stream = read(receiverId, request.stream_id);
      const events = decideStream({ type: 'RequestVerification', receiverId, state: request.state, now: deps.now(), minIntervalSeconds: deps.minVerificationIntervalSeconds }, stream);
      const metadata: EventMetadata = { requestId: audit.requestId, sourceAddress: audit.sourceAddress, actor: `ssf-receiver:${receiverId}` };
      const appended = await store.append(ssfStreams.verifications(request.stream_id), events.map((event) => ({ event, metadata })), { expectedRevision: 'any' });
      await directory.whenApplied(appended.position);
    },
  };
}

export type StreamManagement = ReturnType<typeof createStreamManagement>;
