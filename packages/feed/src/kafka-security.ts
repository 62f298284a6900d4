import type { ConnectionOptions } from 'node:tls';
import type { SASLOptions } from 'kafkajs';
import { InvalidArgument } from '@tessera/contracts';

/** TLS towards the brokers with material of one's own. Omitted fields fall back to Node's defaults (the system CAs, no client certificate). */
export interface KafkaTlsOptions {
  /** PEM CA certificate(s) trusted instead of the system's: a private CA. */
  readonly ca?: string | Buffer | readonly (string | Buffer)[];
  /** PEM client certificate (chain) for mutual TLS; needs `key`. */
  readonly cert?: string | Buffer;
  /** PEM private key of `cert`. */
  readonly key?: string | Buffer;
  /** Decrypts `key` when it is encrypted. */
  readonly passphrase?: string;
}

/** Username and password, for SCRAM (salted challenge: the password never crosses the wire) or PLAIN (sent as it is: only over TLS). */
export interface KafkaPasswordLogin {
  readonly mechanism: 'scram-sha-512' | 'scram-sha-256' | 'plain';
  readonly username: string;
  readonly password: string;
}

/**
 * SASL/OAUTHBEARER: `oauthBearerProvider` is called at each connection and each
 * re-authentication, and returns a token the broker's OAuth validator accepts (for example
 * one fetched with client credentials from the identity provider, cached until shortly before
 * it expires). The token is never logged.
 */
export interface KafkaOAuthBearerLogin {
  readonly mechanism: 'oauthbearer';
  readonly oauthBearerProvider: () => Promise<{ readonly value: string }>;
}

export type KafkaSaslOptions = KafkaPasswordLogin | KafkaOAuthBearerLogin;

/** How a Kafka client of Tessera's proves who it is and protects the connection. */
export interface KafkaSecurityOptions {
  /** true: TLS, trusting the system CAs. Options: TLS with a CA, a client certificate, or both. Omitted: plaintext. */
  readonly ssl?: true | KafkaTlsOptions;
  /** A SASL login after the connection (and its TLS, when `ssl` is set) is up. Omitted: none. */
  readonly sasl?: KafkaSaslOptions;
}

/** What kafkajs takes, and the strings that must never reach a log line. */
export interface KafkaClientSecurity {
  readonly ssl?: true | ConnectionOptions;
  readonly sasl?: SASLOptions;
  /** Passwords, private keys, passphrases and the last OAuth token, as they stand now. */
  secrets(): readonly string[];
}

const text = (value: string | Buffer) => (typeof value === 'string' ? value : value.toString('utf8'));

/** Checks the options and turns them into kafkajs' `ssl` and `sasl`. */
export function kafkaClientSecurity(options: KafkaSecurityOptions): KafkaClientSecurity {
  const { ssl, sasl } = options;
  const secrets = new Set<string>();
  let tls: true | ConnectionOptions | undefined;
  if (ssl === true) tls = true;
  else if (ssl !== undefined) {
    if ((ssl.cert === undefined) !== (ssl.key === undefined)) throw new InvalidArgument('Kafka TLS: a client certificate and its key go together (cert and key, or neither)');
    if (ssl.key !== undefined) secrets.add(text(ssl.key));
    if (ssl.passphrase !== undefined) secrets.add(ssl.passphrase);
    tls = {
      ...(ssl.ca === undefined ? {} : { ca: typeof ssl.ca === 'string' || Buffer.isBuffer(ssl.ca) ? ssl.ca : [...ssl.ca] }),
      ...(ssl.cert === undefined ? {} : { cert: ssl.cert }),
      ...(ssl.key === undefined ? {} : { key: ssl.key }),
      ...(ssl.passphrase === undefined ? {} : { passphrase: ssl.passphrase }),
    };
  }
  let login: SASLOptions | undefined;
  if (sasl?.mechanism === 'oauthbearer') {
    const provide = sasl.oauthBearerProvider;
    if (typeof provide !== 'function') throw new InvalidArgument('Kafka SASL oauthbearer needs an oauthBearerProvider function');
    login = {
      mechanism: 'oauthbearer',
      oauthBearerProvider: async () => {
        const token = await provide();
        if (token.value) secrets.add(token.value);
        return { value: token.value };
      },
    };
  } else if (sasl !== undefined) {
    if (!['scram-sha-512', 'scram-sha-256', 'plain'].includes(sasl.mechanism)) throw new InvalidArgument(`Kafka SASL mechanism must be scram-sha-512, scram-sha-256, plain or oauthbearer, not ${String(sasl.mechanism)}`);
    if (!sasl.username || !sasl.password) throw new InvalidArgument(`Kafka SASL ${sasl.mechanism} needs a username and a password`);
    secrets.add(sasl.password);
    login = { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password };
  }
  return {
    ...(tls === undefined ? {} : { ssl: tls }),
    ...(login === undefined ? {} : { sasl: login }),
    secrets: () => [...secrets],
  };
}

/** A copy of a log entry's details in which every secret's text is replaced; objects are walked, other values kept. */
export function redactSecrets(value: unknown, secrets: readonly string[], depth = 0): unknown {
  if (secrets.length === 0) return value;
  if (typeof value === 'string') return secrets.reduce((redacted, secret) => (secret ? redacted.split(secret).join('[redacted]') : redacted), value);
  if (depth > 5 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item: unknown) => redactSecrets(item, secrets, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactSecrets(item, secrets, depth + 1)]));
}

/** The broker refused who the client is or what it asked: a retry changes nothing until an operator does. */
const refusedTypes = new Set(['SASL_AUTHENTICATION_FAILED', 'UNSUPPORTED_SASL_MECHANISM', 'ILLEGAL_SASL_STATE', 'TOPIC_AUTHORIZATION_FAILED', 'GROUP_AUTHORIZATION_FAILED', 'CLUSTER_AUTHORIZATION_FAILED', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED']);
/** Node's codes for a broker certificate this client does not trust, or a TLS handshake the broker refused. */
const tlsRefusal = /^(ERR_TLS_CERT_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$)/;

/**
 * True when an error, or one it wraps (kafkajs wraps by `cause`, retries by `originalError`,
 * batches by `errors`), is an authentication, authorization or TLS trust refusal.
 */
export function isAccessRefused(error: unknown, depth = 0): boolean {
  if (depth > 5 || error === null || typeof error !== 'object') return false;
  // kafkajs' errors are plain objects to TypeScript; these are the fields it sets on them.
  const { name, type, code, cause, originalError, errors } = error as { name?: unknown; type?: unknown; code?: unknown; cause?: unknown; originalError?: unknown; errors?: unknown };
  if (name === 'KafkaJSSASLAuthenticationError') return true;
  if (typeof type === 'string' && refusedTypes.has(type)) return true;
  if (typeof code === 'string' && tlsRefusal.test(code)) return true;
  return (
    isAccessRefused(cause, depth + 1) ||
    isAccessRefused(originalError, depth + 1) ||
    (Array.isArray(errors) && errors.some((inner: unknown) => isAccessRefused(inner, depth + 1)))
  );
}
