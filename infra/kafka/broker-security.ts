/**
 * What a secured test broker needs, made at its first start in its work folder: a CA, the
 * broker's certificate, client certificates for mutual TLS, SASL users with random passwords
 * (test-only: made here, never committed, each in a file only its owner may read), and the
 * server.properties lines that put them to use.
 */
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync, pbkdf2Sync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const saslMechanisms = ['SCRAM-SHA-512', 'SCRAM-SHA-256', 'PLAIN'] as const;
export type SaslMechanismName = (typeof saslMechanisms)[number];

export interface KafkaSecurityOptions {
  /**
   * SASL users to make besides `admin`, each with the mechanisms it may log in with. Their
   * principal is `User:<name>`; they may do nothing until ACLs allow it.
   */
  readonly users?: Readonly<Record<string, readonly SaslMechanismName[]>>;
  /** Client certificates to make, signed by the broker's CA, for the mutual-TLS listener; the principal is `User:<name>`. */
  readonly tlsClients?: readonly string[];
  /**
   * An OAUTH listener (SASL_SSL, OAUTHBEARER only) that accepts JWTs signed by a test issuer
   * key made here (ES256, checked against a JWKS file, with issuer and audience); the principal
   * is `User:<sub>`.
   */
  readonly oauthBearer?: boolean;
}

/** The test issuer an OAUTH listener trusts: mint tokens with its key to log in. */
export interface OAuthIssuer {
  /** PEM PKCS#8 EC P-256 private key (mode 0600). */
  readonly keyFile: string;
  readonly kid: string;
  readonly issuer: string;
  readonly audience: string;
}

export interface SaslUser {
  readonly username: string;
  readonly password: string;
  /** The password alone in a file (mode 0600), as TESSERA_KAFKA_SASL_PASSWORD_FILE takes it. */
  readonly passwordFile: string;
  readonly mechanisms: readonly SaslMechanismName[];
}

export interface TlsClient {
  readonly principal: string;
  /** PEM certificate signed by the broker's CA. */
  readonly certFile: string;
  /** PEM PKCS#8 private key, unencrypted, mode 0600. */
  readonly keyFile: string;
}

/** What a test needs to reach a secured broker. */
export interface BrokerSecurity {
  /** host:port of the SASL_SSL listener: TLS, then a SASL login. */
  readonly saslSslBootstrap: string;
  /** host:port of the SSL listener that requires a client certificate (mutual TLS, no SASL). */
  readonly mtlsBootstrap: string;
  /** The CA that signed the broker's and the clients' certificates, PEM. */
  readonly caFile: string;
  /** A super user (every mechanism): creates topics and ACLs for the tests. */
  readonly admin: SaslUser;
  readonly users: Readonly<Record<string, SaslUser>>;
  readonly tlsClients: Readonly<Record<string, TlsClient>>;
  /** The broker's own principal (its certificate on the BROKER and CONTROLLER listeners), a super user. */
  readonly brokerPrincipal: string;
  /** With `oauthBearer`: the OAUTH listener's host:port and the issuer it trusts. */
  readonly oauth: (OAuthIssuer & { readonly bootstrap: string }) | undefined;
}

/** The material in the work folder, before the broker's ports are known. */
export interface SecurityMaterial extends Omit<BrokerSecurity, 'saslSslBootstrap' | 'mtlsBootstrap' | 'oauth'> {
  readonly oauthIssuer: OAuthIssuer | undefined;
  /** JVM system properties the broker needs (the JWKS file among the OAuth URLs it may read). */
  readonly systemProperties: readonly string[];
  readonly keystoreFile: string;
  /** StorageTool format arguments that create the SCRAM credentials (salted: no password on a command line). */
  readonly scramArguments: readonly string[];
  /** server.properties lines for TLS, SASL and the authorizer; `saslListeners` are the SASL_SSL listeners' names. */
  properties(saslListeners: readonly string[]): string[];
}

const brokerName = 'kafka-broker';
const adminName = 'admin';
const namePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

function openssl(args: readonly string[], what: string): void {
  const result = spawnSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.error || result.status !== 0) throw new Error(`openssl could not ${what}: ${result.error?.message ?? result.stderr}`);
}

/** A private file: keys and passwords are readable by their owner only. */
function writePrivate(file: string, content: string): void {
  writeFileSync(file, content, { mode: 0o600 });
  chmodSync(file, 0o600);
}

/** An EC P-256 key (fast to make) and a certificate for `commonName`, signed by the CA unless it is the CA. */
function makeCertificate(dir: string, name: string, commonName: string, signer: { cert: string; key: string } | undefined, extensions: string): { cert: string; key: string } {
  const key = join(dir, `${name}.key`);
  const cert = join(dir, `${name}.pem`);
  const extensionsFile = join(dir, `${name}.ext`);
  writeFileSync(extensionsFile, `[req]\ndistinguished_name=dn\n[dn]\n[v3]\n${extensions}\n`);
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key], `make the key of ${commonName}`);
  chmodSync(key, 0o600);
  if (!signer) {
    openssl(['req', '-x509', '-new', '-key', key, '-subj', `/CN=${commonName}`, '-days', '7', '-config', extensionsFile, '-extensions', 'v3', '-out', cert], 'make the CA');
  } else {
    const request = join(dir, `${name}.csr`);
    openssl(['req', '-new', '-key', key, '-subj', `/CN=${commonName}`, '-config', extensionsFile, '-out', request], `make the request of ${commonName}`);
    openssl(
      ['x509', '-req', '-in', request, '-CA', signer.cert, '-CAkey', signer.key, '-set_serial', `0x${randomBytes(16).toString('hex')}`, '-days', '7', '-extfile', extensionsFile, '-extensions', 'v3', '-out', cert],
      `sign the certificate of ${commonName}`,
    );
  }
  return { cert, key };
}

/** SCRAM's SaltedPassword (RFC 5802): what the broker stores, from which the password cannot be read back. */
function scramArgument(mechanism: 'SCRAM-SHA-512' | 'SCRAM-SHA-256', username: string, password: string): string {
  const iterations = 4096;
  const salt = randomBytes(24);
  const digest = mechanism === 'SCRAM-SHA-512' ? 'sha512' : 'sha256';
  const salted = pbkdf2Sync(password, salt, iterations, digest === 'sha512' ? 64 : 32, digest);
  return `${mechanism}=[name=${username},iterations=${iterations},salt="${salt.toString('base64')}",saltedpassword="${salted.toString('base64')}"]`;
}

interface Manifest {
  readonly users: Record<string, readonly SaslMechanismName[]>;
  readonly tlsClients: readonly string[];
  readonly oauthBearer?: boolean;
}

const oauthIssuerName = 'tessera-test-issuer';
const oauthAudience = 'tessera-kafka-test';

/**
 * Makes the material once per work folder; a restarted broker (same folder) reads it back, so
 * its clients keep their passwords and certificates.
 */
export function prepareSecurity(workDir: string, options: KafkaSecurityOptions): SecurityMaterial {
  const dir = join(workDir, 'security');
  const manifestFile = join(dir, 'manifest.json');
  const made = existsSync(manifestFile);
  // The manifest names users and mechanisms only, never a password; it is what the folder was made with.
  const manifest: Manifest = made
    ? (JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest)
    : { users: { [adminName]: saslMechanisms, ...(options.users ?? {}) }, tlsClients: [...(options.tlsClients ?? [])], oauthBearer: options.oauthBearer === true };
  for (const name of [...Object.keys(manifest.users), ...manifest.tlsClients]) {
    if (!namePattern.test(name) || name === brokerName) throw new Error(`user or client name "${name}": use letters, digits, '_', '.' and '-', and not "${brokerName}"`);
  }
  const caFile = join(dir, 'ca.pem');
  const keystoreFile = join(dir, 'broker-keystore.pem');
  const oauthKeyFile = join(dir, 'oauth-issuer.key');
  const jwksFile = join(dir, 'oauth-jwks.json');
  const oauthKid = 'tessera-test-issuer-1';
  const scramArguments: string[] = [];

  if (!made) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const ca = makeCertificate(dir, 'ca', 'tessera-test-ca', undefined, 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign');
    // No extendedKeyUsage: the broker's certificate serves its listeners and, as a client, its own controller.
    const broker = makeCertificate(dir, 'broker', brokerName, ca, 'basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost');
    writePrivate(keystoreFile, `${readFileSync(broker.key, 'utf8')}${readFileSync(broker.cert, 'utf8')}${readFileSync(ca.cert, 'utf8')}`);
    for (const client of manifest.tlsClients) makeCertificate(dir, `client-${client}`, client, ca, 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth');
    for (const username of Object.keys(manifest.users)) writePrivate(join(dir, `${username}.password`), randomBytes(24).toString('base64url'));
    if (manifest.oauthBearer) {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      writePrivate(oauthKeyFile, privateKey.export({ format: 'pem', type: 'pkcs8' }).toString());
      writeFileSync(jwksFile, `${JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: oauthKid, alg: 'ES256', use: 'sig' }] })}\n`);
    }
  }

  const users: Record<string, SaslUser> = {};
  for (const [username, mechanisms] of Object.entries(manifest.users)) {
    const passwordFile = join(dir, `${username}.password`);
    const password = readFileSync(passwordFile, 'utf8');
    users[username] = { username, password, passwordFile, mechanisms };
    if (!made) for (const mechanism of mechanisms) if (mechanism !== 'PLAIN') scramArguments.push('--add-scram', scramArgument(mechanism, username, password));
  }
  writeFileSync(manifestFile, `${JSON.stringify(manifest)}\n`);
  const tlsClients = Object.fromEntries(
    manifest.tlsClients.map((client) => [client, { principal: `User:${client}`, certFile: join(dir, `client-${client}.pem`), keyFile: join(dir, `client-${client}.key`) }]),
  );
  const admin = users[adminName]!;
  const others = Object.fromEntries(Object.entries(users).filter(([username]) => username !== adminName));

  const plainUsers = Object.values(users).filter((user) => user.mechanisms.includes('PLAIN'));
  const properties = (saslListeners: readonly string[]): string[] => [
    // TLS everywhere: the broker's certificate on every listener, the test CA as the only trust.
    'ssl.keystore.type=PEM',
    `ssl.keystore.location=${keystoreFile}`,
    'ssl.truststore.type=PEM',
    `ssl.truststore.location=${caFile}`,
    'ssl.endpoint.identification.algorithm=https',
    'ssl.enabled.protocols=TLSv1.3,TLSv1.2',
    // A certificate's principal is its CN alone: User:kafka-broker, User:<client>.
    'ssl.principal.mapping.rules=RULE:^CN=([^,]+)$/$1/,DEFAULT',
    'listener.name.mtls.ssl.client.auth=required',
    'listener.name.broker.ssl.client.auth=required',
    'listener.name.controller.ssl.client.auth=required',
    `sasl.enabled.mechanisms=${saslMechanisms.join(',')}`,
    ...saslListeners.flatMap((listener) => {
      const prefix = `listener.name.${listener.toLowerCase()}`;
      return [
        `${prefix}.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;`,
        `${prefix}.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;`,
        // PLAIN's users live in its JAAS entry: this file holds their passwords, so it is the owner's only.
        `${prefix}.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required ${plainUsers.map((user) => `user_${user.username}="${user.password}"`).join(' ')};`,
      ];
    }),
    ...(manifest.oauthBearer
      ? [
          // Only signed tokens from the test issuer: the validating handler, not Kafka's unsecured default.
          'listener.name.oauth.sasl.enabled.mechanisms=OAUTHBEARER',
          'listener.name.oauth.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler',
          // The broker never logs in over OAUTH itself; the login module only has to be there.
          `listener.name.oauth.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="${brokerName}";`,
          `sasl.oauthbearer.jwks.endpoint.url=file://${jwksFile}`,
          `sasl.oauthbearer.expected.issuer=${oauthIssuerName}`,
          `sasl.oauthbearer.expected.audience=${oauthAudience}`,
        ]
      : []),
    'authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'allow.everyone.if.no.acl.found=false',
    `super.users=User:${brokerName};User:${adminName}`,
  ];

  const oauthIssuer = manifest.oauthBearer ? { keyFile: oauthKeyFile, kid: oauthKid, issuer: oauthIssuerName, audience: oauthAudience } : undefined;
  // Kafka 3.9.1 reads OAuth URLs only from the ones this property allows.
  const systemProperties = manifest.oauthBearer ? [`-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=file://${jwksFile}`] : [];
  return { caFile, keystoreFile, admin, users: others, tlsClients, brokerPrincipal: `User:${brokerName}`, oauthIssuer, systemProperties, scramArguments, properties };
}
