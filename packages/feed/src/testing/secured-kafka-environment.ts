import { createPrivateKey, randomUUID, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { KafkaConfig } from 'kafkajs';
import { inject } from 'vitest';
import { epochSeconds, systemClock } from '@tessera/timing';

/** What the global setup provides of the secured broker (infra/kafka/broker-security.ts BrokerSecurity). */
export interface SecuredKafka {
  readonly saslSslBootstrap: string;
  readonly mtlsBootstrap: string;
  readonly caFile: string;
  readonly admin: SecuredKafkaUser;
  readonly users: Readonly<Record<string, SecuredKafkaUser>>;
  readonly tlsClients: Readonly<Record<string, { readonly principal: string; readonly certFile: string; readonly keyFile: string }>>;
  readonly brokerPrincipal: string;
  /** The OAUTHBEARER listener and the test issuer whose tokens it accepts. */
  readonly oauth: SecuredKafkaOAuth | undefined;
}

export interface SecuredKafkaOAuth {
  readonly bootstrap: string;
  readonly keyFile: string;
  readonly kid: string;
  readonly issuer: string;
  readonly audience: string;
}

export interface SecuredKafkaUser {
  readonly username: string;
  readonly password: string;
  readonly passwordFile: string;
  readonly mechanisms: readonly string[];
}

declare module 'vitest' {
  export interface ProvidedContext {
    tesseraSecuredKafka: SecuredKafka | null;
  }
}

/**
 * The secured broker (SASL_SSL, mutual TLS, ACLs) the test run shares, read once at the top of
 * a test file; test/support/kafka-global-setup.ts starts it for the files that call this. None:
 * the file skips, loudly, or with TESSERA_REQUIRE_KAFKA=1 the run has failed already.
 */
export function securedKafkaEnvironment(suite: string): SecuredKafka | undefined {
  const secured = inject('tesseraSecuredKafka') ?? undefined;
  if (!secured) {
    const message = `SKIPPING ${suite}: no secured Kafka broker (it needs java, mvn or the cached jars, and openssl). Kafka security is NOT tested in this run. Set TESSERA_REQUIRE_KAFKA=1 to fail instead.`;
    if (process.env.TESSERA_REQUIRE_KAFKA === '1') throw new Error(message);
    console.warn(`\n${'!'.repeat(78)}\n!! ${message}\n${'!'.repeat(78)}\n`);
  }
  return secured;
}

/** kafkajs' connection settings for the admin user (a super user) over SASL_SSL. */
export function adminConnection(secured: SecuredKafka): Pick<KafkaConfig, 'brokers' | 'ssl' | 'sasl'> {
  return {
    brokers: [secured.saslSslBootstrap],
    ssl: { ca: readFileSync(secured.caFile, 'utf8') },
    sasl: { mechanism: 'scram-sha-512', username: secured.admin.username, password: secured.admin.password },
  };
}

export { grantAcls, type AclGrant, type AclOperation } from '../../../../infra/kafka/acls.js';

/**
 * A JWT for the OAUTH listener: ES256, signed with the test issuer's key (or `signingKeyFile`,
 * to make one the broker must refuse), `sub` the principal's name.
 */
export function mintOAuthToken(oauth: SecuredKafkaOAuth, subject: string, options: { readonly lifetimeSeconds?: number; readonly signingKeyFile?: string } = {}): string {
  const now = epochSeconds(systemClock);
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${part({ alg: 'ES256', typ: 'JWT', kid: oauth.kid })}.${part({ iss: oauth.issuer, aud: oauth.audience, sub: subject, iat: now, exp: now + (options.lifetimeSeconds ?? 300), jti: randomUUID() })}`;
  const key = createPrivateKey(readFileSync(options.signingKeyFile ?? oauth.keyFile, 'utf8'));
  // JWS wants the raw r||s form of an ECDSA signature, not DER.
  const signature = sign('sha256', Buffer.from(unsigned), { key, dsaEncoding: 'ieee-p1363' });
  return `${unsigned}.${signature.toString('base64url')}`;
}
