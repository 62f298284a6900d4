import { z } from 'zod';
import { ssfStreamStatuses } from '@tessera/events';
import { deliveryMethods } from './event-types.js';

/**
 * Stream management's bodies (SSF 1.0, sections 7 and 8) as zod schemas: they check the requests
 * and make the OpenAPI document. Unknown fields are refused, as elsewhere in Tessera; the
 * transmitter-supplied fields a receiver may send back on PUT (iss, aud, events_supported, …) are
 * accepted and ignored.
 */
/**
 * Bounds chosen so that the largest body the schema allows fits in the 16 KiB body limit: a body
 * the document calls valid is never answered 413.
 */
const id = z.string().min(1).max(128);
const eventType = z.string().min(1).max(200);
const url = z.string().min(1).max(1024);

const pushDelivery = z.strictObject({
  method: z.literal(deliveryMethods.push),
  endpoint_url: url.describe('Where SETs are POSTed (application/secevent+jwt); https unless TESSERA_SSF_ALLOW_HTTP_PUSH=true'),
  authorization_header: z.string().min(1).max(1024).optional().describe('Sent as the Authorization header of every push; stored encrypted, never returned'),
});
const pollDelivery = z.strictObject({
  method: z.literal(deliveryMethods.poll),
  // Empty as well: some receiver libraries always send the member, empty for a polled stream.
  endpoint_url: z.string().max(1024).optional().describe('Transmitter-supplied: ignored on the way in, empty or not'),
});
export const DeliveryRequest = z.discriminatedUnion('method', [pushDelivery, pollDelivery]);
export type DeliveryRequest = z.infer<typeof DeliveryRequest>;

/** Transmitter-supplied fields: accepted on the way in, ignored. */
const ignored = {
  iss: z.string().max(256).optional(),
  aud: z.union([z.string().max(256), z.array(z.string().max(256)).max(4)]).optional(),
  events_supported: z.array(eventType).max(8).optional(),
  events_delivered: z.array(eventType).max(8).optional(),
  min_verification_interval: z.number().int().nonnegative().optional(),
  inactivity_timeout: z.number().int().nonnegative().optional(),
};
const receiverSupplied = {
  events_requested: z.array(eventType).max(16).optional().describe('Event types wanted; omitted: the CAEP types (urn:tessera:secevent:token-rotated only when named)'),
  description: z.string().max(1000).optional(),
};

export const CreateStreamRequest = z.strictObject({ delivery: DeliveryRequest, ...receiverSupplied, ...ignored, stream_id: id.optional() });
export const UpdateStreamRequest = z.strictObject({ stream_id: id, delivery: DeliveryRequest.optional(), ...receiverSupplied, ...ignored });
export const ReplaceStreamRequest = z.strictObject({ stream_id: id, delivery: DeliveryRequest, ...receiverSupplied, ...ignored });
export type CreateStreamRequest = z.infer<typeof CreateStreamRequest>;
export type UpdateStreamRequest = z.infer<typeof UpdateStreamRequest>;
export type ReplaceStreamRequest = z.infer<typeof ReplaceStreamRequest>;

export const StreamConfiguration = z.object({
  stream_id: z.string(),
  iss: z.string(),
  aud: z.string(),
  events_supported: z.array(z.string()),
  events_requested: z.array(z.string()),
  events_delivered: z.array(z.string()),
  min_verification_interval: z.number().int().optional().describe('Seconds between two verification requests; one sooner is answered 429 with Retry-After'),
  delivery: z.object({ method: z.string(), endpoint_url: z.string() }),
  description: z.string().optional(),
});
export type StreamConfiguration = z.infer<typeof StreamConfiguration>;

export const StreamIdQuery = z.strictObject({ stream_id: id });
export const OptionalStreamIdQuery = z.strictObject({ stream_id: id.optional() });

export const StreamStatus = z.object({
  stream_id: z.string(),
  status: z.enum(ssfStreamStatuses),
  reason: z.string().optional(),
  tessera_dropped_sets: z.number().int().optional().describe('SETs the receiver refused as malformed (invalid_request) and that were dropped, since the transmitter started'),
  tessera_last_drop: z
    .object({ jti: z.string(), err: z.string(), at: z.number().int().describe('Epoch seconds') })
    .optional()
    .describe('The latest dropped SET'),
});
export const StreamStatusRequest = z.strictObject({ stream_id: id, status: z.enum(ssfStreamStatuses), reason: z.string().max(500).optional() });

/**
 * The subjects a stream can follow. An iss_sub's `iss` must be this transmitter's issuer. When the
 * issuer is known as the routes are made (TESSERA_PUBLIC_URL, or a fixed TESSERA_PORT), the schema
 * and the served OpenAPI document say so; with TESSERA_PORT=0 the default issuer names the port the
 * listener binds later, so the schema takes any string and the request is checked when handled
 * (400 naming subject.iss) either way.
 */
const subjectIdentifier = (issuer: string | undefined) =>
  z.discriminatedUnion('format', [
    z.strictObject({
      format: z.literal('iss_sub'),
      iss: (issuer === undefined ? z.string() : z.literal(issuer)).describe("This transmitter's issuer: its metadata's `issuer`"),
      sub: id.describe('An account id: every SET about that account'),
    }),
    z.strictObject({ format: z.literal('opaque'), id: id.describe('A token family id: SETs about that one session') }),
  ]);
export type SubjectIdentifier = { readonly format: 'iss_sub'; readonly iss: string; readonly sub: string } | { readonly format: 'opaque'; readonly id: string };
export const addSubjectRequest = (issuer: string | undefined) => z.strictObject({ stream_id: id, subject: subjectIdentifier(issuer), verified: z.boolean().optional() });
export const removeSubjectRequest = (issuer: string | undefined) => z.strictObject({ stream_id: id, subject: subjectIdentifier(issuer) });
export const VerificationRequest = z.strictObject({ stream_id: id, state: z.string().max(1000).optional() });

/**
 * RFC 8936 section 2.4: the poll request. Members it does not name are ignored rather than
 * refused, unlike Tessera's other bodies: receivers send their own (SGNL's caep.dev ssfreceiver
 * `stream_id` and `max_events`, i2goSignals `timeoutSecs`) and a refused poll delivers nothing.
 * `stream_id`, which some send, is taken when it names the stream polled, refused when it names
 * another.
 */
export const PollRequest = z.object({
  stream_id: id.optional().describe('The stream polled, as the query names it; another is refused 400'),
  maxEvents: z.number().int().min(0).max(1000).optional(),
  returnImmediately: z.boolean().optional(),
  ack: z.array(z.string().min(1).max(64)).max(100).optional(),
  setErrs: z
    .record(z.string().min(1).max(64), z.strictObject({ err: z.string().min(1).max(64), description: z.string().max(200).optional() }))
    .refine((errs) => Object.keys(errs).length <= 20, 'at most 20 entries')
    .meta({ maxProperties: 20 })
    .optional(),
});
export type PollRequest = z.infer<typeof PollRequest>;
export const PollResponse = z.object({ sets: z.record(z.string(), z.string()), moreAvailable: z.boolean().optional() });

export const TransmitterMetadata = z.object({
  spec_version: z.string(),
  issuer: z.string(),
  jwks_uri: z.string(),
  delivery_methods_supported: z.array(z.string()),
  configuration_endpoint: z.string(),
  status_endpoint: z.string(),
  add_subject_endpoint: z.string(),
  remove_subject_endpoint: z.string(),
  verification_endpoint: z.string(),
  authorization_schemes: z.array(z.object({ spec_urn: z.string() })),
  default_subjects: z.literal('NONE'),
});
