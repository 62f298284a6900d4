import { readFileSync } from 'node:fs';
import { ConfigError, type TesseraConfig } from './config.js';
import { kafkaTlsWanted } from './kafka-security-variables.js';
import { errorCode } from '@tessera/contracts';

/**
 * What createKafkaFeed takes as `ssl` and `sasl` (the shape of @tessera/feed's
 * KafkaSecurityOptions, repeated here because config depends on no other package).
 */
export interface KafkaSecurity {
  readonly ssl?: true | { readonly ca?: string; readonly cert?: string; readonly key?: string };
  readonly sasl?: { readonly mechanism: 'scram-sha-512' | 'scram-sha-256' | 'plain'; readonly username: string; readonly password: string };
}

type ReadText = (path: string) => string;
const readText: ReadText = (path) => readFileSync(path, 'utf8');

/**
 * The TLS and SASL settings of this process's Kafka clients, with their files read: spread it
 * into createKafkaFeed's options. Empty without security variables. A file that cannot be read,
 * or does not hold what its variable says, is a start failure that names the variable and the
 * path, never the content.
 */
export function kafkaSecurityOf(config: TesseraConfig, read: ReadText = readText): KafkaSecurity {
  const file = (variable: keyof TesseraConfig, path: string, holds?: { readonly marker: RegExp; readonly what: string }): string => {
    let content: string;
    try {
      content = read(path);
    } catch (error) {
      const code = errorCode(error) ?? 'unreadable';
      throw new ConfigError(`invalid configuration: ${variable}: cannot read ${path} (${code})`);
    }
    if (holds && !holds.marker.test(content)) throw new ConfigError(`invalid configuration: ${variable}: ${path} holds no ${holds.what}`);
    return content;
  };
  const security: { ssl?: KafkaSecurity['ssl']; sasl?: KafkaSecurity['sasl'] } = {};
  if (kafkaTlsWanted(config)) {
    const { TESSERA_KAFKA_TLS_CA_FILE: caFile, TESSERA_KAFKA_TLS_CERT_FILE: certFile, TESSERA_KAFKA_TLS_KEY_FILE: keyFile } = config;
    const ca = caFile === undefined ? undefined : file('TESSERA_KAFKA_TLS_CA_FILE', caFile, { marker: /-----BEGIN CERTIFICATE-----/, what: 'PEM certificate' });
    const cert = certFile === undefined ? undefined : file('TESSERA_KAFKA_TLS_CERT_FILE', certFile, { marker: /-----BEGIN CERTIFICATE-----/, what: 'PEM certificate' });
    const key = keyFile === undefined ? undefined : file('TESSERA_KAFKA_TLS_KEY_FILE', keyFile, { marker: /-----BEGIN (RSA |EC |ENCRYPTED )?PRIVATE KEY-----/, what: 'PEM private key' });
    security.ssl = ca === undefined && cert === undefined ? true : { ...(ca === undefined ? {} : { ca }), ...(cert === undefined ? {} : { cert }), ...(key === undefined ? {} : { key }) };
  }
  const { TESSERA_KAFKA_SASL_MECHANISM: mechanism, TESSERA_KAFKA_SASL_USERNAME: username, TESSERA_KAFKA_SASL_PASSWORD_FILE: passwordFile } = config;
  if (mechanism !== undefined && username !== undefined) {
    // A password file written with `echo` ends with a newline that is not part of the password.
    const password = passwordFile === undefined ? config.TESSERA_KAFKA_SASL_PASSWORD : file('TESSERA_KAFKA_SASL_PASSWORD_FILE', passwordFile).replace(/\r?\n$/, '');
    if (!password) throw new ConfigError(`invalid configuration: ${passwordFile === undefined ? 'TESSERA_KAFKA_SASL_PASSWORD' : `TESSERA_KAFKA_SASL_PASSWORD_FILE: ${passwordFile}`} is empty`);
    security.sasl = { mechanism, username, password };
  }
  return security;
}
