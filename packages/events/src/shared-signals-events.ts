import { z } from 'zod';

/**
 * The OpenID Shared Signals transmitter's events (docs/shared-signals.md): its receivers and their
 * streams live in the log like everything else, so their history is audited like everything else.
 * A receiver token is kept only as a keyed hash; a push endpoint's Authorization header only
 * encrypted (AES-256-GCM under a key derived from the secret-hashing key), never in plain form.
 */

const epochSeconds = z.number().int().nonnegative();
const id = z.string().min(1).max(128);
const keyedHash = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'base64url HMAC-SHA256');

export const SsfReceiverRegistered = z.object({
  type: z.literal('SsfReceiverRegistered'),
  v: z.literal(1),
  receiverId: id,
  name: z.string().min(1).max(200),
  tokenHash: keyedHash,
  /** The fingerprint of the secret-hashing key that made `tokenHash`; absent: the log's first key. */
  hashingKey: z.string().regex(/^[A-Za-z0-9_-]{22}$/).optional(),
  /**
   * The accounts the receiver may follow (subjects of those accounts and of their families);
   * absent: every account. Optional and still `v: 1`: an older reader sees the receiver unscoped.
   */
  accounts: z.array(id).min(1).max(100).optional(),
  at: epochSeconds,
});

export const SsfReceiverRevoked = z.object({
  type: z.literal('SsfReceiverRevoked'),
  v: z.literal(1),
  receiverId: id,
  at: epochSeconds,
});

/** A subject a stream follows: an account (`iss_sub`, sub = account id) or one session (`opaque`, id = family id). */
export const SsfSubject = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('account'), accountId: id }),
  z.object({ kind: z.literal('family'), familyId: id }),
]);

/** How a stream's SETs travel: pushed to the receiver (RFC 8935) or polled by it (RFC 8936). */
export const SsfDelivery = z.discriminatedUnion('method', [
  z.object({
    method: z.literal('push'),
    endpointUrl: z.string().min(1).max(2048),
    /** The Authorization header sent with each push, AES-256-GCM sealed (`v1.<hashing key fingerprint>.<iv>.<ciphertext>.<tag>`); absent when none. */
    sealedAuthorization: z.string().max(4096).optional(),
  }),
  z.object({ method: z.literal('poll') }),
]);

/** What a receiver configured, and what the transmitter decided from it: the whole of it on every change (fat events). */
export const SsfStreamConfiguration = z.object({
  delivery: SsfDelivery,
  eventsRequested: z.array(z.string().min(1).max(256)).max(32),
  eventsDelivered: z.array(z.string().min(1).max(256)).max(32),
  description: z.string().max(1000).optional(),
});

export const SsfStreamCreated = z.object({
  type: z.literal('SsfStreamCreated'),
  v: z.literal(1),
  streamId: id,
  receiverId: id,
  configuration: SsfStreamConfiguration,
  at: epochSeconds,
});

/** PATCH and PUT alike: the stream's whole configuration after the change. */
export const SsfStreamUpdated = z.object({
  type: z.literal('SsfStreamUpdated'),
  v: z.literal(1),
  streamId: id,
  receiverId: id,
  configuration: SsfStreamConfiguration,
  at: epochSeconds,
});

export const ssfStreamStatuses = ['enabled', 'paused', 'disabled'] as const;

/**
 * enabled, paused (SETs are held: delivered when enabled again) or disabled (SETs are not held).
 * `reason` is the receiver's, or the transmitter's when it paused the stream itself (delivery
 * failing too long, or the stream fell behind the oldest retained event: then `skippedTo` is the
 * position delivery resumes after, and the gap is in the reason).
 */
export const SsfStreamStatusChanged = z.object({
  type: z.literal('SsfStreamStatusChanged'),
  v: z.literal(1),
  streamId: id,
  receiverId: id,
  status: z.enum(ssfStreamStatuses),
  reason: z.string().max(500).optional(),
  /** Who changed it: the receiver, or the transmitter itself. */
  by: z.enum(['receiver', 'transmitter']),
  /** Decimal log position: delivery resumes after it (set when the stream fell behind retention). */
  skippedTo: z.string().regex(/^\d+$/).optional(),
  at: epochSeconds,
});

export const SsfSubjectAdded = z.object({
  type: z.literal('SsfSubjectAdded'),
  v: z.literal(1),
  streamId: id,
  receiverId: id,
  subject: SsfSubject,
  at: epochSeconds,
});

export const SsfSubjectRemoved = z.object({
  type: z.literal('SsfSubjectRemoved'),
  v: z.literal(1),
  streamId: id,
  receiverId: id,
  subject: SsfSubject,
  at: epochSeconds,
});

export const SsfStreamDeleted = z.object({
  type: z.literal('SsfStreamDeleted'),
  v: z.literal(1),
  streamId: id,
  receiverId: id,
  at: epochSeconds,
});

/** The receiver asked for a verification event; the SET carries its `state`. */
export const SsfVerificationRequested = z.object({
  type: z.literal('SsfVerificationRequested'),
  v: z.literal(1),
  streamId: id,
  receiverId: id,
  state: z.string().max(1000).optional(),
  at: epochSeconds,
});

/**
 * The whole stream as it stands after the events before it: appended by the transmitter's own
 * decision every `snapshotEvery` events of the stream, so a command reads the stream back from its
 * newest snapshot, not from its creation, however often subjects come and go. Events before the
 * newest snapshot may leave the hot log once older than its hot window (the archive's retention rule).
 */
export const SsfStreamSnapshotted = z.object({
  type: z.literal('SsfStreamSnapshotted'),
  v: z.literal(1),
  streamId: id,
  receiverId: id,
  configuration: SsfStreamConfiguration,
  status: z.enum(ssfStreamStatuses),
  reason: z.string().max(500).optional(),
  subjects: z.array(SsfSubject).max(10_000),
  at: epochSeconds,
});

const replica = z.string().min(1).max(200);
const epoch = z.number().int().positive();
const decimalPosition = z.string().regex(/^\d+$/);
/** SHA-256 of the certificate the holder serves, as Node prints it (`AB:CD:…`): the others pin it when they forward. */
const certificateSha256 = z.string().regex(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);

/**
 * The delivery lease (`ssfdelivery`, docs/decisions/0029): one replica of the deployment delivers
 * every stream's SETs at a time. Taken with the previous epoch + 1; every later append of the
 * holder expects the revision it last wrote, so a replica that took over fences a stale holder.
 */
export const SsfDeliveryLeaseTaken = z.object({
  type: z.literal('SsfDeliveryLeaseTaken'),
  v: z.literal(1),
  replica,
  epoch,
  /** Where the other replicas forward polls to: the holder's TESSERA_SSF_REPLICA_URL. */
  url: z.string().min(1).max(2048),
  certificateSha256: certificateSha256.optional(),
  ttlSeconds: z.number().int().min(3).max(3600),
  at: epochSeconds,
});

/**
 * The holder is alive, every TTL/3. It names its url and certificate again: the rolling stream
 * keeps only its newest event once the Taken is older than the hot window.
 */
export const SsfDeliveryLeaseRenewed = z.object({
  type: z.literal('SsfDeliveryLeaseRenewed'),
  v: z.literal(1),
  replica,
  epoch,
  url: z.string().min(1).max(2048),
  certificateSha256: certificateSha256.optional(),
  at: epochSeconds,
});

/** The holder stopped gracefully: another replica takes the lease at once. */
export const SsfDeliveryLeaseReleased = z.object({
  type: z.literal('SsfDeliveryLeaseReleased'),
  v: z.literal(1),
  replica,
  epoch,
  at: epochSeconds,
});

/**
 * Where delivery has got to, a whole snapshot: every live stream with nothing pending delivered
 * everything up to `upTo`; `positions` names only the streams behind it (pending SETs, paused,
 * dormant). A stream in neither is at max(upTo, its creation position). Decimal positions: a
 * bigint has no JSON form.
 */
export const SsfDeliveryCheckpointed = z.object({
  type: z.literal('SsfDeliveryCheckpointed'),
  v: z.literal(1),
  replica,
  epoch,
  upTo: decimalPosition.optional(),
  positions: z.record(id, decimalPosition),
  at: epochSeconds,
});

/** Spread into TesseraEvent's union. */
export const sharedSignalsEvents = [
  SsfReceiverRegistered,
  SsfReceiverRevoked,
  SsfStreamCreated,
  SsfStreamUpdated,
  SsfStreamStatusChanged,
  SsfSubjectAdded,
  SsfSubjectRemoved,
  SsfStreamDeleted,
  SsfVerificationRequested,
  SsfStreamSnapshotted,
  SsfDeliveryLeaseTaken,
  SsfDeliveryLeaseRenewed,
  SsfDeliveryLeaseReleased,
  SsfDeliveryCheckpointed,
] as const;

export type SsfReceiverRegistered = z.infer<typeof SsfReceiverRegistered>;
export type SsfReceiverRevoked = z.infer<typeof SsfReceiverRevoked>;
export type SsfSubject = z.infer<typeof SsfSubject>;
export type SsfDelivery = z.infer<typeof SsfDelivery>;
export type SsfStreamConfiguration = z.infer<typeof SsfStreamConfiguration>;
export type SsfStreamCreated = z.infer<typeof SsfStreamCreated>;
export type SsfStreamUpdated = z.infer<typeof SsfStreamUpdated>;
export type SsfStreamStatus = (typeof ssfStreamStatuses)[number];
export type SsfStreamStatusChanged = z.infer<typeof SsfStreamStatusChanged>;
export type SsfSubjectAdded = z.infer<typeof SsfSubjectAdded>;
export type SsfSubjectRemoved = z.infer<typeof SsfSubjectRemoved>;
export type SsfStreamDeleted = z.infer<typeof SsfStreamDeleted>;
export type SsfVerificationRequested = z.infer<typeof SsfVerificationRequested>;
export type SsfStreamSnapshotted = z.infer<typeof SsfStreamSnapshotted>;

export type SsfDeliveryLeaseTaken = z.infer<typeof SsfDeliveryLeaseTaken>;
export type SsfDeliveryLeaseRenewed = z.infer<typeof SsfDeliveryLeaseRenewed>;
export type SsfDeliveryLeaseReleased = z.infer<typeof SsfDeliveryLeaseReleased>;
export type SsfDeliveryCheckpointed = z.infer<typeof SsfDeliveryCheckpointed>;

export type SsfReceiverEvent = SsfReceiverRegistered | SsfReceiverRevoked;
export type SsfStreamEvent = SsfStreamCreated | SsfStreamUpdated | SsfStreamStatusChanged | SsfSubjectAdded | SsfSubjectRemoved | SsfStreamDeleted | SsfVerificationRequested | SsfStreamSnapshotted;

export const ssfReceiverEventTypes = ['SsfReceiverRegistered', 'SsfReceiverRevoked'] as const satisfies readonly SsfReceiverEvent['type'][];
export const ssfStreamEventTypes = [
  'SsfStreamCreated',
  'SsfStreamUpdated',
  'SsfStreamStatusChanged',
  'SsfSubjectAdded',
  'SsfSubjectRemoved',
  'SsfStreamDeleted',
  'SsfVerificationRequested',
  'SsfStreamSnapshotted',
] as const satisfies readonly SsfStreamEvent['type'][];
export type SsfDeliveryEvent = SsfDeliveryLeaseTaken | SsfDeliveryLeaseRenewed | SsfDeliveryLeaseReleased | SsfDeliveryCheckpointed;
export const ssfDeliveryEventTypes = ['SsfDeliveryLeaseTaken', 'SsfDeliveryLeaseRenewed', 'SsfDeliveryLeaseReleased', 'SsfDeliveryCheckpointed'] as const satisfies readonly SsfDeliveryEvent['type'][];
/** Every Shared Signals event: the transmitter's receivers and streams, which say who is told, not which tokens live, and its delivery lease. */
export const sharedSignalsEventTypes = [...ssfReceiverEventTypes, ...ssfStreamEventTypes, ...ssfDeliveryEventTypes] as const;

export const ssfStreams = {
  receiver: (receiverId: string) => `ssfreceiver-${receiverId}`,
  stream: (streamId: string) => `ssfstream-${streamId}`,
  /**
   * A stream's verification requests, apart from its configuration: commands on the stream read
   * its own stream whole, and verifications (as many as a receiver asks for) would grow that read.
   * A rolling stream: its events leave the hot log once older than the hot window.
   */
  verifications: (streamId: string) => `ssfverifications-${streamId}`,
  /**
   * The deployment's one delivery lease and its checkpoints (every stream's). A rolling stream:
   * its events leave the hot log once older than the hot window, except the newest.
   */
  delivery: () => 'ssfdelivery',
} as const;
