import { z } from 'zod';

/** `https://host[:port][/path]`, kept without a trailing slash: what receivers are told to reach. */
const httpsUrl = z
  .string()
  .refine((value) => URL.canParse(value) && new URL(value).protocol === 'https:' && new URL(value).search === '' && new URL(value).hash === '', 'must be an https:// URL without query or fragment')
  .transform((value) => value.replace(/\/+$/, ''));

/**
 * The variables of the Shared Signals transmitter (docs/shared-signals.md), spread into the
 * configuration schema.
 */
export const ssfVariables = {
  /**
   * The base URL clients reach this process at (through a load balancer, say): the transmitter's
   * issuer, the SETs' `iss` and every absolute URL of its metadata. Default https://TESSERA_HOST:<port>,
   * the port the public listener bound (TESSERA_PORT, or the one the system chose for TESSERA_PORT=0).
   */
  TESSERA_PUBLIC_URL: httpsUrl.optional(),
  /** `true` lets a stream push to an http:// endpoint: development only, warned about at start. */
  TESSERA_SSF_ALLOW_HTTP_PUSH: z.enum(['true', 'false'], 'must be true or false').default('false'),
  /** Seconds a stream's delivery may keep failing before the transmitter pauses it. */
  TESSERA_SSF_PAUSE_AFTER: z.coerce.number().positive().max(31_536_000).default(86_400),
  /** Seconds one push may take (connect, TLS, answer) before it counts as failed and is retried. */
  TESSERA_SSF_PUSH_TIMEOUT: z.coerce.number().positive().max(300).default(10),
  /** Most streams one receiver may have at once: each costs memory, a worker and metric series. */
  TESSERA_SSF_MAX_STREAMS_PER_RECEIVER: z.coerce.number().int().positive().max(10_000).default(20),
  /**
   * Seconds between two verification requests on one stream (SSF 1.0 `min_verification_interval`):
   * one sooner is answered 429 with Retry-After. 10 s: at most 6 a minute.
   */
  TESSERA_SSF_MIN_VERIFICATION_INTERVAL: z.coerce.number().int().positive().max(86_400).default(10),
  /** Seconds a long poll (`returnImmediately: false`) waits for a SET before answering an empty set. */
  TESSERA_SSF_POLL_WAIT: z.coerce.number().positive().max(300).default(30),
  /**
   * Seconds a polled SET that was answered and not acknowledged is held back from the stream's
   * next polls before it is answered again (as a message queue's acknowledgment deadline): a
   * receiver that never acknowledges is not answered the same SETs as fast as it asks. 0 answers
   * them again at once.
   */
  TESSERA_SSF_ACK_DEADLINE: z.coerce.number().int().min(0).max(3600).default(10),
  /**
   * Seconds between two polls of one stream that answer nothing, when the second asks to be
   * answered at once (`returnImmediately: true`) and acknowledges nothing: one sooner is answered
   * 429 with Retry-After, never delayed (RFC 8936 has it answered at once). A poll with SETs to
   * answer or acknowledgments to take is never refused; a long poll waits instead. 0 turns it off.
   */
  TESSERA_SSF_EMPTY_POLL_INTERVAL: z.coerce.number().int().min(0).max(300).default(1),
  /**
   * Seconds the Shared Signals delivery lease lasts without a renewal (renewed every third of it):
   * one replica of the deployment delivers every stream; another takes over this long after the
   * holder went silent. Minimum 3.
   */
  TESSERA_SSF_LEASE_TTL: z.coerce.number().int().min(3).max(3600).default(30),
  /**
   * Where the other replicas reach this one when it holds the delivery lease (they forward polls
   * and status reads to it), e.g. `http://$(POD_NAME).tessera-issuer:8080` behind a headless
   * service. Default http://127.0.0.1:<the port the public listener bound>: one machine only.
   */
  TESSERA_SSF_REPLICA_URL: z
    .string()
    .refine((value) => URL.canParse(value) && ['http:', 'https:'].includes(new URL(value).protocol) && new URL(value).search === '', 'must be an http:// or https:// URL without query')
    .transform((value) => value.replace(/\/+$/, ''))
    .optional(),
  /**
   * This replica's name in the delivery lease; a restart under the same name takes the lease back
   * at once. Default `<hostname>-<first 8 hex of sha256 of the absolute keys folder>`: each replica
   * has its own keys folder, and a StatefulSet pod keeps its hostname.
   */
  TESSERA_REPLICA_ID: z.string().min(1).max(200).optional(),
};

/**
 * The transmitter's issuer: TESSERA_PUBLIC_URL, else https://TESSERA_HOST:<port>, where the port is
 * the one the public listener bound (`boundPort`), which differs from TESSERA_PORT when that is 0.
 */
export function publicUrlOf(config: { readonly TESSERA_PUBLIC_URL?: string | undefined; readonly TESSERA_HOST: string; readonly TESSERA_PORT: number }, boundPort?: number): string {
  if (config.TESSERA_PUBLIC_URL !== undefined) return config.TESSERA_PUBLIC_URL;
  const host = config.TESSERA_HOST.includes(':') ? `[${config.TESSERA_HOST}]` : config.TESSERA_HOST;
  return `https://${host}:${boundPort ?? config.TESSERA_PORT}`;
}
