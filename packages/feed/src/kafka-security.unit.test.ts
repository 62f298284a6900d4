import kafkajs from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { translateKafkaError } from './kafka-feed.js';
import { isAccessRefused, kafkaClientSecurity, redactSecrets } from './kafka-security.js';
import { FeedPublishRejected, FeedUnavailable } from './revocation-feed.js';

const { KafkaJSConnectionError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } = kafkajs;

const password = 'a-test-password-of-some-length';

describe('Kafka client security options', () => {
  it('passes a password login and TLS material to kafkajs as they are', () => {
    const security = kafkaClientSecurity({ ssl: { ca: 'CA PEM', cert: 'CERT PEM', key: 'KEY PEM' }, sasl: { mechanism: 'scram-sha-512', username: 'relay', password } });
    expect(security.ssl).toEqual({ ca: 'CA PEM', cert: 'CERT PEM', key: 'KEY PEM' });
    expect(security.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'relay', password });
    expect(security.secrets()).toEqual(expect.arrayContaining(['KEY PEM', password]));
    expect(kafkaClientSecurity({ ssl: true })).toMatchObject({ ssl: true });
    expect(kafkaClientSecurity({})).not.toHaveProperty('ssl');
  });

  it('refuses a client certificate without its key, and a login without a password', () => {
    expect(() => kafkaClientSecurity({ ssl: { cert: 'CERT PEM' } })).toThrow(/cert and key/);
    expect(() => kafkaClientSecurity({ sasl: { mechanism: 'plain', username: 'u', password: '' } })).toThrow(/needs a username and a password/);
  });

  it('calls the OAuth bearer provider at each login and keeps the token it returns out of the logs', async () => {
    let calls = 0;
    const security = kafkaClientSecurity({ sasl: { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: `token-${++calls}-abcdef` }) } });
    if (security.sasl?.mechanism !== 'oauthbearer') throw new Error('no oauthbearer login');
    expect(await security.sasl.oauthBearerProvider()).toEqual({ value: 'token-1-abcdef' });
    expect(await security.sasl.oauthBearerProvider()).toEqual({ value: 'token-2-abcdef' });
    expect(security.secrets()).toEqual(['token-1-abcdef', 'token-2-abcdef']);
  });

  it('redacts every secret from the strings of a log entry, however deep', () => {
    const entry = { broker: 'kafka:9093', error: `bad login for ${password}`, nested: { list: [password, 3], ok: true } };
    expect(redactSecrets(entry, [password])).toEqual({ broker: 'kafka:9093', error: 'bad login for [redacted]', nested: { list: ['[redacted]', 3], ok: true } });
  });
});

describe('an access refusal is FeedPublishRejected, not FeedUnavailable', () => {
  // kafkajs' typings give KafkaJSSASLAuthenticationError no message argument: this is the error as it arrives.
  const authentication = Object.assign(new Error('SASL SCRAM SHA512 authentication failed: invalid credentials'), { name: 'KafkaJSSASLAuthenticationError', retriable: false });
  const authorization = new KafkaJSProtocolError(Object.assign(new Error('Not authorized to access topics: [Topic authorization failed]'), { type: 'TOPIC_AUTHORIZATION_FAILED', code: 29, retriable: false }));
  // What Node reports for a broker certificate signed by a CA the client does not trust.
  const untrusted = new KafkaJSConnectionError('Connection error: self-signed certificate in certificate chain', { broker: 'kafka:9093', code: 'SELF_SIGNED_CERT_IN_CHAIN' });

  it.each([
    ['a failed SASL login', authentication],
    ['a missing ACL', authorization],
    ['an untrusted broker certificate', untrusted],
    ['a missing ACL after kafkajs ran out of retries', new KafkaJSNumberOfRetriesExceeded(authorization, { retryCount: 5, retryTime: 1000 })],
    ['a failed login after kafkajs ran out of retries', new KafkaJSNumberOfRetriesExceeded(authentication, { retryCount: 5, retryTime: 1000 })],
  ])('%s', (_case, error) => {
    expect(isAccessRefused(error)).toBe(true);
    const translated = translateKafkaError(error, 'publishing 1 events to tessera.revocations');
    expect(translated).toBeInstanceOf(FeedPublishRejected);
    expect(translated.message).toMatch(/Kafka refused access while publishing 1 events to tessera\.revocations/);
  });

  it('a broker that is away stays FeedUnavailable', () => {
    const away = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9093', { broker: '127.0.0.1:9093', code: 'ECONNREFUSED' });
    expect(isAccessRefused(away)).toBe(false);
    expect(translateKafkaError(away, 'connecting the producer')).toBeInstanceOf(FeedUnavailable);
    expect(translateKafkaError(new KafkaJSNumberOfRetriesExceeded(away, { retryCount: 5, retryTime: 1000 }), 'publishing')).toBeInstanceOf(FeedUnavailable);
  });
});
