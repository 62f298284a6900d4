import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import { kafkaSecurityOf } from './kafka-security.js';

const brokers = { TESSERA_KAFKA_BROKERS: 'kafka-1:9093,kafka-2:9093' };
const folder = mkdtempSync(join(tmpdir(), 'tessera-config-kafka-'));
const caPem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const keyPem = '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n';
const password = 'not-a-real-password-but-a-test-one';
const write = (name: string, content: string) => {
  const file = join(folder, name);
  writeFileSync(file, content);
  return file;
};
const caFile = write('ca.pem', caPem);
const certFile = write('client.pem', caPem);
const keyFile = write('client.key', keyPem);
const passwordFile = write('password', `${password}\n`);
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** The start failure's message: one line, `invalid configuration: VARIABLE: reason`. */
function refusal(env: Record<string, string>): string {
  try {
    kafkaSecurityOf(loadConfig(env));
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('the configuration was accepted');
}

describe('Kafka security configuration', () => {
  it('is empty without security variables: plaintext, no login', () => {
    expect(kafkaSecurityOf(loadConfig(brokers))).toEqual({});
  });

  it('TESSERA_KAFKA_TLS=true turns TLS on with the system CAs; false keeps it off', () => {
    expect(kafkaSecurityOf(loadConfig({ ...brokers, TESSERA_KAFKA_TLS: 'true' }))).toEqual({ ssl: true });
    expect(kafkaSecurityOf(loadConfig({ ...brokers, TESSERA_KAFKA_TLS: 'false' }))).toEqual({});
  });

  it('TESSERA_KAFKA_TLS_CA_FILE turns TLS on with that CA; a certificate and key add mutual TLS', () => {
    expect(kafkaSecurityOf(loadConfig({ ...brokers, TESSERA_KAFKA_TLS_CA_FILE: caFile }))).toEqual({ ssl: { ca: caPem } });
    expect(kafkaSecurityOf(loadConfig({ ...brokers, TESSERA_KAFKA_TLS_CA_FILE: caFile, TESSERA_KAFKA_TLS_CERT_FILE: certFile, TESSERA_KAFKA_TLS_KEY_FILE: keyFile }))).toEqual({
      ssl: { ca: caPem, cert: caPem, key: keyPem },
    });
    // A client certificate alone asks for TLS, trusting the system CAs.
    expect(kafkaSecurityOf(loadConfig({ ...brokers, TESSERA_KAFKA_TLS_CERT_FILE: certFile, TESSERA_KAFKA_TLS_KEY_FILE: keyFile }))).toEqual({ ssl: { cert: caPem, key: keyPem } });
  });

  it.each(['scram-sha-512', 'scram-sha-256'] as const)('reads a %s login, the password from its file without the trailing newline', (mechanism) => {
    const env = { ...brokers, TESSERA_KAFKA_SASL_MECHANISM: mechanism, TESSERA_KAFKA_SASL_USERNAME: 'tessera-relay', TESSERA_KAFKA_SASL_PASSWORD_FILE: passwordFile };
    expect(kafkaSecurityOf(loadConfig(env))).toEqual({ sasl: { mechanism, username: 'tessera-relay', password } });
  });

  it('takes TESSERA_KAFKA_SASL_PASSWORD too, and plain over TLS', () => {
    const env = { ...brokers, TESSERA_KAFKA_TLS: 'true', TESSERA_KAFKA_SASL_MECHANISM: 'plain', TESSERA_KAFKA_SASL_USERNAME: 'verifier', TESSERA_KAFKA_SASL_PASSWORD: password };
    expect(kafkaSecurityOf(loadConfig(env))).toEqual({ ssl: true, sasl: { mechanism: 'plain', username: 'verifier', password } });
  });

  const login = { TESSERA_KAFKA_SASL_MECHANISM: 'scram-sha-512', TESSERA_KAFKA_SASL_USERNAME: 'tessera-relay', TESSERA_KAFKA_SASL_PASSWORD_FILE: passwordFile };

  it.each<[string, Record<string, string>, RegExp]>([
    ['a mechanism without a username', { ...brokers, TESSERA_KAFKA_SASL_MECHANISM: 'scram-sha-512', TESSERA_KAFKA_SASL_PASSWORD_FILE: passwordFile }, /TESSERA_KAFKA_SASL_USERNAME: needed with TESSERA_KAFKA_SASL_MECHANISM/],
    ['a mechanism without a password', { ...brokers, TESSERA_KAFKA_SASL_MECHANISM: 'scram-sha-256', TESSERA_KAFKA_SASL_USERNAME: 'relay' }, /TESSERA_KAFKA_SASL_PASSWORD_FILE: needed with TESSERA_KAFKA_SASL_MECHANISM/],
    ['a username without a mechanism', { ...brokers, TESSERA_KAFKA_SASL_USERNAME: 'relay', TESSERA_KAFKA_SASL_PASSWORD_FILE: passwordFile }, /TESSERA_KAFKA_SASL_MECHANISM: needed with TESSERA_KAFKA_SASL_USERNAME/],
    ['a password without a mechanism', { ...brokers, TESSERA_KAFKA_SASL_PASSWORD: password }, /TESSERA_KAFKA_SASL_MECHANISM: needed with a SASL password/],
    ['both a password and a password file', { ...brokers, ...login, TESSERA_KAFKA_SASL_PASSWORD: password }, /TESSERA_KAFKA_SASL_PASSWORD: set TESSERA_KAFKA_SASL_PASSWORD_FILE or TESSERA_KAFKA_SASL_PASSWORD, not both/],
    ['an unknown mechanism', { ...brokers, ...login, TESSERA_KAFKA_SASL_MECHANISM: 'gssapi' }, /TESSERA_KAFKA_SASL_MECHANISM: must be scram-sha-512, scram-sha-256 or plain/],
    ['plain without TLS', { ...brokers, ...login, TESSERA_KAFKA_SASL_MECHANISM: 'plain' }, /TESSERA_KAFKA_SASL_MECHANISM: plain sends the password as it is: it needs TLS/],
    ['a certificate without a key', { ...brokers, TESSERA_KAFKA_TLS_CERT_FILE: certFile }, /TESSERA_KAFKA_TLS_KEY_FILE: needed with TESSERA_KAFKA_TLS_CERT_FILE/],
    ['a key without a certificate', { ...brokers, TESSERA_KAFKA_TLS_KEY_FILE: keyFile }, /TESSERA_KAFKA_TLS_CERT_FILE: needed with TESSERA_KAFKA_TLS_KEY_FILE/],
    ['a CA file with TESSERA_KAFKA_TLS=false', { ...brokers, TESSERA_KAFKA_TLS: 'false', TESSERA_KAFKA_TLS_CA_FILE: caFile }, /TESSERA_KAFKA_TLS_CA_FILE: needs TLS, but TESSERA_KAFKA_TLS is false/],
    ['TESSERA_KAFKA_TLS neither true nor false', { ...brokers, TESSERA_KAFKA_TLS: 'yes' }, /TESSERA_KAFKA_TLS: must be true or false/],
    ['TLS without brokers', { TESSERA_KAFKA_TLS: 'true' }, /TESSERA_KAFKA_TLS: needs TESSERA_KAFKA_BROKERS/],
    ['a CA file without brokers', { TESSERA_KAFKA_TLS_CA_FILE: caFile }, /TESSERA_KAFKA_TLS_CA_FILE: needs TESSERA_KAFKA_BROKERS/],
    ['a login without brokers', login, /TESSERA_KAFKA_SASL_MECHANISM: needs TESSERA_KAFKA_BROKERS/],
  ])('refuses %s, naming the variable, on one line', (_case, env, expected) => {
    const message = refusal(env);
    expect(message).toMatch(/^invalid configuration: /);
    expect(message).toMatch(expected);
    expect(message).not.toContain('\n');
    expect(message).not.toContain(password);
  });

  it.each<[string, Record<string, string>]>([
    ['TESSERA_KAFKA_TLS_CA_FILE', { TESSERA_KAFKA_TLS_CA_FILE: join(folder, 'missing-ca.pem') }],
    ['TESSERA_KAFKA_TLS_CERT_FILE', { TESSERA_KAFKA_TLS_CERT_FILE: join(folder, 'missing.pem'), TESSERA_KAFKA_TLS_KEY_FILE: keyFile }],
    ['TESSERA_KAFKA_TLS_KEY_FILE', { TESSERA_KAFKA_TLS_CERT_FILE: certFile, TESSERA_KAFKA_TLS_KEY_FILE: join(folder, 'missing.key') }],
    ['TESSERA_KAFKA_SASL_PASSWORD_FILE', { ...login, TESSERA_KAFKA_SASL_PASSWORD_FILE: join(folder, 'missing-password') }],
  ])('a %s that cannot be read fails the start, naming the variable and the path', (variable, env) => {
    const [path] = Object.entries(env).filter(([, value]) => value.includes('missing')).map(([, value]) => value);
    expect(refusal({ ...brokers, ...env })).toBe(`invalid configuration: ${variable}: cannot read ${path} (ENOENT)`);
  });

  it('a file that does not hold what its variable says fails the start without showing the content', () => {
    // The password file given as the CA, the key as the certificate: easy slips when mounting secrets.
    const asCa = refusal({ ...brokers, TESSERA_KAFKA_TLS_CA_FILE: passwordFile });
    expect(asCa).toBe(`invalid configuration: TESSERA_KAFKA_TLS_CA_FILE: ${passwordFile} holds no PEM certificate`);
    expect(refusal({ ...brokers, TESSERA_KAFKA_TLS_CERT_FILE: keyFile, TESSERA_KAFKA_TLS_KEY_FILE: keyFile })).toMatch(/^invalid configuration: TESSERA_KAFKA_TLS_CERT_FILE: .* holds no PEM certificate$/);
    expect(refusal({ ...brokers, TESSERA_KAFKA_TLS_CERT_FILE: certFile, TESSERA_KAFKA_TLS_KEY_FILE: certFile })).toMatch(/TESSERA_KAFKA_TLS_KEY_FILE: .* holds no PEM private key$/);
    expect(asCa).not.toContain(password);
  });

  it('an empty password file fails the start', () => {
    const empty = write('empty-password', '\n');
    expect(refusal({ ...brokers, ...login, TESSERA_KAFKA_SASL_PASSWORD_FILE: empty })).toBe(`invalid configuration: TESSERA_KAFKA_SASL_PASSWORD_FILE: ${empty} is empty`);
  });
});
