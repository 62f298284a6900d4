import { loadConfig, kafkaSecurityOf } from '@tessera/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaFeed, privateGroupId, type KafkaFeedOptions } from './kafka-feed.js';
import { FeedPublishRejected, FeedUnavailable, silentLogger, type FeedEvent, type FeedLogger } from './revocation-feed.js';
import { createRecorder, tokenRevoked } from './sample-events.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { grantAcls, mintOAuthToken, securedKafkaEnvironment } from './testing/secured-kafka-environment.js';
import { systemClock } from '@tessera/timing';

const secured = securedKafkaEnvironment('Kafka feed on a secured broker (SASL_SSL, mutual TLS, ACLs)');

/**
 * Every client here is configured as a Tessera process is: TESSERA_KAFKA_* variables through
 * loadConfig and kafkaSecurityOf, files and all, into createKafkaFeed.
 */
describe.skipIf(!secured)('Kafka feed on a secured broker (SASL_SSL, mutual TLS, ACLs)', () => {
  const s = secured!;
  const topic = `secured.revocations.${randomUUID()}`;
  const groupPrefix = `secured-feed-${randomUUID()}`;
  const record = createRecorder();
  const opened: { close(): Promise<void> }[] = [];

  /** A feed as a process with these variables would make it (the SASL_SSL listener and the test CA unless said). */
  const feedWith = (variables: Record<string, string>, extra: Partial<KafkaFeedOptions> = {}) => {
    const config = loadConfig({ TESSERA_KAFKA_BROKERS: s.saslSslBootstrap, TESSERA_KAFKA_TLS_CA_FILE: s.caFile, ...variables });
    const feed = createKafkaFeed({ brokers: config.TESSERA_KAFKA_BROKERS!, topic, logger: silentLogger, ...kafkaSecurityOf(config), ...extra });
    opened.push(feed);
    return feed;
  };
  const login = (username: string, mechanism: string) => ({
    TESSERA_KAFKA_SASL_MECHANISM: mechanism,
    TESSERA_KAFKA_SASL_USERNAME: username,
    TESSERA_KAFKA_SASL_PASSWORD_FILE: s.users[username]!.passwordFile,
  });
  const mutualTls = (client: string) => ({
    TESSERA_KAFKA_BROKERS: s.mtlsBootstrap,
    TESSERA_KAFKA_TLS_CERT_FILE: s.tlsClients[client]!.certFile,
    TESSERA_KAFKA_TLS_KEY_FILE: s.tlsClients[client]!.keyFile,
  });
  // Refusals are expected quickly: one retry, short waits.
  const impatient: Partial<KafkaFeedOptions> = { publishRetry: { retries: 1, maxRetryTimeMs: 500 } };

  /** Reads the topic from its start in a group of its own until `familyId` comes by. */
  const readUntil = async (feed: ReturnType<typeof createKafkaFeed>, familyId: string): Promise<FeedEvent> => {
    let found!: (event: FeedEvent) => void;
    const seen = new Promise<FeedEvent>((resolve) => (found = resolve));
    const consumer = await feed.consume({
      groupId: privateGroupId(groupPrefix),
      onEvent: (event) => {
        if (event.event.type === 'TokenRevoked' && event.event.familyId === familyId) found(event);
      },
    });
    opened.push(consumer);
    return seen;
  };
  const revocation = () => {
    const familyId = `fam-${randomUUID()}`;
    return { familyId, events: [record(tokenRevoked(familyId, 1, Math.floor(systemClock.now() / 1000)))] };
  };

  beforeAll(async () => {
    // The admin user (a super user) makes the topic; every other principal gets only what it needs.
    const admin = createKafkaFeed({ brokers: s.saslSslBootstrap, topic, logger: silentLogger, ssl: { ca: readCa() }, sasl: { mechanism: 'scram-sha-512', username: s.admin.username, password: s.admin.password } });
    await admin.ensureTopic({ partitions: 3 });
    await admin.close();
    const readers = ['User:reader', 'User:verifier', 'User:downstream', s.tlsClients['mtls-relay']!.principal, 'User:oauth-relay'];
    await grantAcls(s, [
      { principal: 'User:relay', resource: 'topic', name: topic, operations: ['WRITE', 'DESCRIBE'] },
      { principal: 'User:oauth-relay', resource: 'topic', name: topic, operations: ['WRITE'] },
      { principal: s.tlsClients['mtls-relay']!.principal, resource: 'topic', name: topic, operations: ['WRITE'] },
      ...readers.flatMap((principal) => [
        { principal, resource: 'topic' as const, name: topic, operations: ['READ' as const, 'DESCRIBE' as const] },
        { principal, resource: 'group' as const, name: groupPrefix, prefixed: true, operations: ['READ' as const] },
      ]),
    ]);
  });

  afterAll(async () => {
    for (const closable of opened.reverse()) await closable.close().catch(() => undefined);
  });

  function readCa(): string {
    const { ssl } = kafkaSecurityOf(loadConfig({ TESSERA_KAFKA_BROKERS: s.saslSslBootstrap, TESSERA_KAFKA_TLS_CA_FILE: s.caFile }));
    if (ssl === true || ssl?.ca === undefined) throw new Error('no CA read');
    return ssl.ca;
  }

  it('SCRAM-SHA-512 over TLS: the relay user publishes, and the reader user consumes what it published', async () => {
    const { familyId, events } = revocation();
    await feedWith(login('relay', 'scram-sha-512')).publish(events);
    const delivered = await readUntil(feedWith(login('reader', 'scram-sha-512')), familyId);
    expect(delivered.eventId).toBe(events[0]!.eventId);
  });

  it.each([
    ['SCRAM-SHA-256', 'verifier', 'scram-sha-256'],
    ['PLAIN', 'downstream', 'plain'],
  ])('%s over TLS: a consumer logs in and reads the topic', async (_name, username, mechanism) => {
    const { familyId, events } = revocation();
    await feedWith(login('relay', 'scram-sha-512')).publish(events);
    const delivered = await readUntil(feedWith(login(username, mechanism)), familyId);
    expect(delivered.eventId).toBe(events[0]!.eventId);
  });

  it('mutual TLS: the client certificate alone is the login; it publishes and consumes', async () => {
    const feed = feedWith(mutualTls('mtls-relay'));
    const { familyId, events } = revocation();
    await feed.publish(events);
    expect((await readUntil(feed, familyId)).eventId).toBe(events[0]!.eventId);
  });

  it('a client without credentials is refused on the SASL_SSL listener and on the mutual-TLS listener', async () => {
    const anonymous = feedWith({}, impatient);
    const refused = await anonymous.publish(revocation().events).then(() => undefined, (error: unknown) => error);
    expect(refused).toBeInstanceOf(FeedUnavailable);
    const withoutCertificate = feedWith({ TESSERA_KAFKA_BROKERS: s.mtlsBootstrap }, impatient);
    const refusedTls = await withoutCertificate.publish(revocation().events).then(() => undefined, (error: unknown) => error);
    expect(refusedTls).toBeInstanceOf(FeedPublishRejected);
  });

  it('a wrong password is refused with FeedPublishRejected, and neither it nor the right one reaches a log line', async () => {
    const lines: string[] = [];
    const capture: FeedLogger = {
      info: (details, message) => lines.push(JSON.stringify([message, details])),
      warn: (details, message) => lines.push(JSON.stringify([message, details])),
      error: (details, message) => lines.push(JSON.stringify([message, details])),
    };
    const wrong = `${s.users.relay!.password}-wrong`;
    const feed = feedWith({ ...login('relay', 'scram-sha-512'), TESSERA_KAFKA_SASL_PASSWORD_FILE: '', TESSERA_KAFKA_SASL_PASSWORD: wrong }, { ...impatient, logger: capture });
    const refused = await feed.publish(revocation().events).then(() => undefined, (error: unknown) => error);
    expect(refused).toBeInstanceOf(FeedPublishRejected);
    expect(String(refused)).toMatch(/Kafka refused access while connecting the producer.*authentication failed/i);
    await feed.close();
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line).not.toContain(wrong);
      expect(line).not.toContain(s.users.relay!.password);
    }
    expect(String(refused)).not.toContain(wrong);
  });

  it('a consumer with a wrong password, or outside the groups its ACLs allow, is refused with FeedPublishRejected', async () => {
    const wrong = feedWith({ ...login('reader', 'scram-sha-512'), TESSERA_KAFKA_SASL_PASSWORD_FILE: '', TESSERA_KAFKA_SASL_PASSWORD: `${s.users.reader!.password}-wrong` });
    await expect(wrong.consume({ groupId: privateGroupId(groupPrefix), onEvent: () => undefined })).rejects.toBeInstanceOf(FeedPublishRejected);
    const reader = feedWith(login('reader', 'scram-sha-512'));
    const outside = await reader.consume({ groupId: privateGroupId('not-granted'), onEvent: () => undefined }).then(() => undefined, (error: unknown) => error);
    expect(outside).toBeInstanceOf(FeedPublishRejected);
    // kafkajs reports a refused group as a coordinator it could not find, without the broker's reason.
    expect(String(outside)).toMatch(/Failed to find group coordinator; with ACLs, check READ on the group/);
  });

  it('a user whose ACLs allow reading the topic consumes it, and publishing to it is FeedPublishRejected', async () => {
    const reader = feedWith(login('reader', 'scram-sha-512'), impatient);
    const refused = await reader.publish(revocation().events).then(() => undefined, (error: unknown) => error);
    expect(refused).toBeInstanceOf(FeedPublishRejected);
    expect(String(refused)).toMatch(/authorization failed/i);
    const { familyId, events } = revocation();
    await feedWith(login('relay', 'scram-sha-512')).publish(events);
    expect((await readUntil(reader, familyId)).eventId).toBe(events[0]!.eventId);
  });

  it('a broker certificate the client does not trust (system CAs only) is FeedPublishRejected', async () => {
    const config = loadConfig({ TESSERA_KAFKA_BROKERS: s.saslSslBootstrap, TESSERA_KAFKA_TLS: 'true', ...login('relay', 'scram-sha-512') });
    const feed = createKafkaFeed({ brokers: s.saslSslBootstrap, topic, logger: silentLogger, ...kafkaSecurityOf(config), ...impatient });
    opened.push(feed);
    const refused = await feed.publish(revocation().events).then(() => undefined, (error: unknown) => error);
    expect(refused).toBeInstanceOf(FeedPublishRejected);
    expect(String(refused)).toMatch(/certificate/);
  });

  it('OAUTHBEARER: the oauthBearerProvider hook logs in with a signed token; a token signed by another key is refused (as FeedUnavailable)', async () => {
    const oauth = s.oauth!;
    let calls = 0;
    const feed = createKafkaFeed({
      brokers: oauth.bootstrap,
      topic,
      logger: silentLogger,
      ssl: { ca: readCa() },
      sasl: { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: (calls++, mintOAuthToken(oauth, 'oauth-relay')) }) },
    });
    opened.push(feed);
    const { familyId, events } = revocation();
    await feed.publish(events);
    expect((await readUntil(feed, familyId)).eventId).toBe(events[0]!.eventId);
    expect(calls).toBeGreaterThan(0);

    const folder = mkdtempSync(join(tmpdir(), 'tessera-oauth-'));
    try {
      const stranger = join(folder, 'stranger.key');
      writeFileSync(stranger, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
      const forged = createKafkaFeed({
        brokers: oauth.bootstrap,
        topic,
        logger: silentLogger,
        ssl: { ca: readCa() },
        sasl: { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: mintOAuthToken(oauth, 'oauth-relay', { signingKeyFile: stranger }) }) },
        ...impatient,
      });
      opened.push(forged);
      const refused = await forged.publish(revocation().events).then(() => undefined, (error: unknown) => error);
      // The broker answers a bad token with an error challenge that kafkajs 2.2.4 takes for
      // success; its next request then finds the connection closed. So this refusal looks like
      // an outage, is retried, and each retry asks the provider for a fresh token.
      expect(refused).toBeInstanceOf(FeedUnavailable);
      expect(String(refused)).toMatch(/Closed connection/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
