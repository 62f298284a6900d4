import { z } from 'zod';
import { ssfStreamStatuses } from '@tessera/contracts';
import { deliveryMethods } from './event-types.js';

/**
 * Stream management's bodies (SSF 1.0, sections 7 and 8) as zod schemas: they check the requests
 * and make the OpenAPI document. Unknown fields are refused, as elsewhere in Tessera; the
 * transmitter-supplied fields a receiver may send back on PUT (iss, aud, events_supported, …) are
 * accepted and ignored.
 */
const id = z.string().min(1).max(128);
const eventType = z.string().min(1).max(256);
const url = z.string().min(1).max(2048);

const pushDelivery = z.strictObject({
  method: z.literal(deliveryMethods.push),
  endpoint_url: url.describe('Where SETs are POSTed (application/secevent+jwt); https unless TESSERA_SSF_ALLOW_HTTP_PUSH=true'),
  authorization_header: z.string().min(1).max(2048).optional().describe('Sent as the Authorization header of every push; stored encrypted, never returned'),
});
const pollDelivery = z.strictObject({
  method: z.literal(deliveryMethods.poll),
  endpoint_url: url.optional().describe('Transmitter-supplied: ignored on the way in'),
});
export const DeliveryRequest = z.discriminatedUnion('method', [pushDelivery, pollDelivery]);
export type DeliveryRequest = z.infer<typeof DeliveryRequest>;

/** Transmitter-supplied fields: accepted on the way in, ignored. */
const ignored = {
  iss: z.string().max(2048).optional(),
  aud: z.union([z.string().max(2048), z.array(z.string().max(2048)).max(16)]).optional(),
  events_supported: z.array(eventType).max(32).optional(),
  events_delivered: z.array(eventType).max(32).optional(),
  min_verification_interval: z.number().int().nonnegative().optional(),
  inactivity_timeout: z.number().int().nonnegative().optional(),
};
const receiverSupplied = {
  events_requested: z.array(eventType).max(32).optional().describe('Event types wanted; omitted: every supported type'),
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
  delivery: z.object({ method: z.string(), endpoint_url: z.string() }),
  description: z.string().optional(),
});
export type StreamConfiguration = z.infer<typeof StreamConfiguration>;

export const StreamIdQuery = z.strictObject({ stream_id: id });
export const OptionalStreamIdQuery = z.strictObject({ stream_id: id.optional() });

export const StreamStatus = z.object({ stream_id: z.string(), status: z.enum(ssfStreamStatuses), reason: z.string().optional() });
export const StreamStatusRequest = z.strictObject({ stream_id: id, status: z.enum(ssfStreamStatuses), reason: z.string().max(500).optional() });

export const SubjectIdentifier = z.discriminatedUnion('format', [
  z.strictObject({ format: z.literal('iss_sub'), iss: z.string().min(1).max(2048), sub: id.describe('An account id: every SET about that account') }),
  z.strictObject({ format: z.literal('opaque'), id: id.describe('A token family id: SETs about that one session') }),
]);
export type SubjectIdentifier = z.infer<typeof SubjectIdentifier>;
export const AddSubjectRequest = z.strictObject({ stream_id: id, subject: SubjectIdentifier, verified: z.boolean().optional() });
export const RemoveSubjectRequest = z.strictObject({ stream_id: id, subject: SubjectIdentifier });
export const VerificationRequest = z.strictObject({ stream_id: id, state: z.string().max(1000).optional() });

/** RFC 8936 section 2.4: the poll request. */
export const PollRequest = z.strictObject({
  maxEvents: z.number().int().min(0).max(1000).optional(),
  returnImmediately: z.boolean().optional(),
  ack: z.array(z.string().min(1).max(128)).max(1000).optional(),
  setErrs: z.record(z.string().min(1).max(128), z.strictObject({ err: z.string().min(1).max(64), description: z.string().max(1000).optional() })).optional(),
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
