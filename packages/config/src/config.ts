import { z } from 'zod';

/** Environment, parsed once at boot. A bad value stops the start and names the variable. */
const seconds = (fallback: number) => z.coerce.number().int().positive().max(31_536_000).default(fallback);
const port = z.coerce.number().int().min(0).max(65535);

export const ConfigSchema = z
  .object({
    TESSERA_DATA_DIR: z.string().min(1).default('./data'),
    /** Private signing keys (default `keys/` in the data folder). The secret-hashing key stays in the data folder (docs/decisions/0008). */
    TESSERA_KEYS_DIR: z.string().min(1).optional(),
    TESSERA_HOST: z.string().min(1).default('127.0.0.1'),
    TESSERA_PORT: port.default(8443),
    TESSERA_LEGACY_PORT: port.optional(),
    TESSERA_TLS_CERT: z.string().min(1).optional(),
    TESSERA_TLS_KEY: z.string().min(1).optional(),
    TESSERA_ACCESS_TOKEN_TTL: seconds(3600),
    TESSERA_REFRESH_TOKEN_TTL: seconds(604_800),
    TESSERA_LEGACY_TOKEN_TTL: seconds(1800),
    TESSERA_EVENT_STORE: z
      .string()
      .regex(/^(esdb(\+discover)?:\/\/|sqlite:)/, 'must be esdb://… or sqlite:<file>')
      .optional(),
    TESSERA_KAFKA_BROKERS: z
      .string()
      .regex(/^[^\s,]+:\d+(,[^\s,]+:\d+)*$/, 'must be host:port[,host:port…]')
      .optional(),
    TESSERA_KAFKA_TOPIC: z.string().min(1).default('tessera.revocations'),
    TESSERA_ISSUER: z.string().min(1).default('urn:tessera:issuer'),
    TESSERA_CLOCK_SKEW: z.coerce.number().int().min(0).max(600).default(60),
    /** A used refresh token presented again: `keep` (spec 3.2) or `revoke-family` (RFC 9700 section 4.14.2; docs/decisions/0010). */
    TESSERA_REFRESH_REUSE: z.enum(['keep', 'revoke-family']).default('keep'),
    TESSERA_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Where a verifier's revocation projection comes from: the event log, or Kafka (a verifier in another region). */
    TESSERA_VERIFIER_SOURCE: z.enum(['log', 'kafka']).default('log'),
    /** The issuer's JWKS, for a Kafka-fed verifier that has no access to the log. */
    TESSERA_ISSUER_JWKS_URL: z.url().optional(),
  })
  .refine((c) => c.TESSERA_VERIFIER_SOURCE === 'log' || c.TESSERA_KAFKA_BROKERS !== undefined, {
    message: 'TESSERA_VERIFIER_SOURCE=kafka needs TESSERA_KAFKA_BROKERS',
    path: ['TESSERA_VERIFIER_SOURCE'],
  })
  .refine((c) => c.TESSERA_LEGACY_PORT === undefined || c.TESSERA_LEGACY_PORT === 0 || c.TESSERA_LEGACY_PORT !== c.TESSERA_PORT, {
    message: 'must differ from TESSERA_PORT (leave it unset to serve v1 on the same listener)',
    path: ['TESSERA_LEGACY_PORT'],
  })
  .refine((c) => (c.TESSERA_TLS_CERT === undefined) === (c.TESSERA_TLS_KEY === undefined), {
    message: 'TESSERA_TLS_CERT and TESSERA_TLS_KEY go together: set both or neither',
    path: ['TESSERA_TLS_CERT'],
  });

export type TesseraConfig = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): TesseraConfig {
  // An empty variable means "not set", as shells and compose files often write it.
  const present = Object.fromEntries(Object.entries(env).filter(([key, value]) => key.startsWith('TESSERA_') && value !== ''));
  const parsed = ConfigSchema.safeParse(present);
  if (parsed.success) return parsed.data;
  // One line, so a supervisor's log shows the whole cause in the line it keeps.
  const causes = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'config'}: ${issue.message}`);
  throw new ConfigError(`invalid configuration: ${causes.join('; ')}`);
}
