import { z } from 'zod';

/**
 * The variables that secure Tessera's Kafka clients (docs/kafka.md). Files rather than values
 * for the key and the password, so that neither sits in the environment of every child process.
 */
export const kafkaSecurityVariables = {
  /** `true`: TLS towards the brokers, trusting the system CAs. Implied by the CA file, the client certificate or the key. */
  TESSERA_KAFKA_TLS: z.enum(['true', 'false'], 'must be true or false').optional(),
  /** PEM CA certificate(s) that signed the brokers' certificates; turns TLS on. */
  TESSERA_KAFKA_TLS_CA_FILE: z.string().min(1).optional(),
  /** PEM client certificate for mutual TLS; with TESSERA_KAFKA_TLS_KEY_FILE. */
  TESSERA_KAFKA_TLS_CERT_FILE: z.string().min(1).optional(),
  /** PEM private key of the client certificate (unencrypted). */
  TESSERA_KAFKA_TLS_KEY_FILE: z.string().min(1).optional(),
  TESSERA_KAFKA_SASL_MECHANISM: z.enum(['scram-sha-512', 'scram-sha-256', 'plain'], 'must be scram-sha-512, scram-sha-256 or plain').optional(),
  TESSERA_KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  /** A file holding the password (one trailing newline is ignored); preferred over TESSERA_KAFKA_SASL_PASSWORD. */
  TESSERA_KAFKA_SASL_PASSWORD_FILE: z.string().min(1).optional(),
  /** The password itself; never logged. */
  TESSERA_KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
};

type KafkaSecurityVariables = z.infer<z.ZodObject<typeof kafkaSecurityVariables>>;

/** True when the variables ask for TLS: explicitly, or through material that only TLS can use. */
export function kafkaTlsWanted(c: KafkaSecurityVariables): boolean {
  return c.TESSERA_KAFKA_TLS === 'true' || c.TESSERA_KAFKA_TLS_CA_FILE !== undefined || c.TESSERA_KAFKA_TLS_CERT_FILE !== undefined || c.TESSERA_KAFKA_TLS_KEY_FILE !== undefined;
}

/** A half-set security configuration is refused, naming the variable to fix: a client that starts insecure, or cannot log in, must not start. */
export function checkKafkaSecurity(c: KafkaSecurityVariables & { readonly TESSERA_KAFKA_BROKERS?: string | undefined }, context: z.RefinementCtx): void {
  const refuse = (variable: keyof KafkaSecurityVariables, message: string) => context.addIssue({ code: 'custom', message, path: [variable] });
  const set = (Object.keys(kafkaSecurityVariables) as (keyof KafkaSecurityVariables)[]).filter((name) => c[name] !== undefined);
  if (c.TESSERA_KAFKA_BROKERS === undefined) {
    for (const name of set) refuse(name, 'needs TESSERA_KAFKA_BROKERS (it secures the connection to Kafka)');
    return;
  }
  if (c.TESSERA_KAFKA_TLS === 'false') {
    for (const name of ['TESSERA_KAFKA_TLS_CA_FILE', 'TESSERA_KAFKA_TLS_CERT_FILE', 'TESSERA_KAFKA_TLS_KEY_FILE'] as const) {
      if (c[name] !== undefined) refuse(name, 'needs TLS, but TESSERA_KAFKA_TLS is false');
    }
  }
  if (c.TESSERA_KAFKA_TLS_CERT_FILE !== undefined && c.TESSERA_KAFKA_TLS_KEY_FILE === undefined) refuse('TESSERA_KAFKA_TLS_KEY_FILE', 'needed with TESSERA_KAFKA_TLS_CERT_FILE (a client certificate and its key go together)');
  if (c.TESSERA_KAFKA_TLS_KEY_FILE !== undefined && c.TESSERA_KAFKA_TLS_CERT_FILE === undefined) refuse('TESSERA_KAFKA_TLS_CERT_FILE', 'needed with TESSERA_KAFKA_TLS_KEY_FILE (a client certificate and its key go together)');
  if (c.TESSERA_KAFKA_SASL_PASSWORD !== undefined && c.TESSERA_KAFKA_SASL_PASSWORD_FILE !== undefined) refuse('TESSERA_KAFKA_SASL_PASSWORD', 'set TESSERA_KAFKA_SASL_PASSWORD_FILE or TESSERA_KAFKA_SASL_PASSWORD, not both');
  const password = c.TESSERA_KAFKA_SASL_PASSWORD_FILE ?? c.TESSERA_KAFKA_SASL_PASSWORD;
  if (c.TESSERA_KAFKA_SASL_MECHANISM === undefined) {
    if (c.TESSERA_KAFKA_SASL_USERNAME !== undefined) refuse('TESSERA_KAFKA_SASL_MECHANISM', 'needed with TESSERA_KAFKA_SASL_USERNAME (scram-sha-512, scram-sha-256 or plain)');
    else if (password !== undefined) refuse('TESSERA_KAFKA_SASL_MECHANISM', 'needed with a SASL password (scram-sha-512, scram-sha-256 or plain)');
    return;
  }
  if (c.TESSERA_KAFKA_SASL_USERNAME === undefined) refuse('TESSERA_KAFKA_SASL_USERNAME', 'needed with TESSERA_KAFKA_SASL_MECHANISM');
  if (password === undefined) refuse('TESSERA_KAFKA_SASL_PASSWORD_FILE', 'needed with TESSERA_KAFKA_SASL_MECHANISM (or TESSERA_KAFKA_SASL_PASSWORD)');
  // PLAIN sends the password itself: over a connection without TLS anyone on the path reads it.
  if (c.TESSERA_KAFKA_SASL_MECHANISM === 'plain' && !kafkaTlsWanted(c)) refuse('TESSERA_KAFKA_SASL_MECHANISM', 'plain sends the password as it is: it needs TLS (TESSERA_KAFKA_TLS=true or TESSERA_KAFKA_TLS_CA_FILE)');
}
