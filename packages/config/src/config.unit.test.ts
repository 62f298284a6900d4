import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, mirroredRegionsOf } from './config.js';

describe('config', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      TESSERA_DATA_DIR: './data',
      TESSERA_HOST: '127.0.0.1',
      TESSERA_PORT: 8443,
      TESSERA_ACCESS_TOKEN_TTL: 3600,
      TESSERA_REFRESH_TOKEN_TTL: 604800,
      TESSERA_LEGACY_TOKEN_TTL: 1800,
      TESSERA_KAFKA_TOPIC: 'tessera.revocations',
      TESSERA_REFRESH_REUSE: 'keep',
    });
    expect(config.TESSERA_EVENT_STORE).toBeUndefined();
    expect(config.TESSERA_KAFKA_BROKERS).toBeUndefined();
  });

  it.each([
    ['TESSERA_PORT', 'eighty'],
    ['TESSERA_ACCESS_TOKEN_TTL', '-5'],
    ['TESSERA_KAFKA_BROKERS', 'not a broker'],
    ['TESSERA_EVENT_STORE', 'postgres://x'],
    ['TESSERA_LOG_LEVEL', 'loud'],
    ['TESSERA_REFRESH_REUSE', 'revoke'],
  ])('refuses a bad %s and names it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it('reads TESSERA_TRUSTED_PROXIES: addresses, CIDR ranges and named ranges; unset trusts no proxy', () => {
    expect(loadConfig({}).TESSERA_TRUSTED_PROXIES).toBeUndefined();
    expect(loadConfig({ TESSERA_TRUSTED_PROXIES: '10.0.0.1, 10.1.0.0/16,::1,fd00::/8, loopback' }).TESSERA_TRUSTED_PROXIES).toEqual(['10.0.0.1', '10.1.0.0/16', '::1', 'fd00::/8', 'loopback']);
    for (const value of ['10.0.0.0/33', '::1/129', 'proxy.internal', '10.0.0.1,', '10.0.0.0/8/1', '10.0.0.0/x', 'everything']) {
      expect(() => loadConfig({ TESSERA_TRUSTED_PROXIES: value }), value).toThrow(/TESSERA_TRUSTED_PROXIES/);
    }
  });

  it('reads TESSERA_ACCEPTED_ISSUERS: https URLs without a trailing slash; unset accepts no other', () => {
    expect(loadConfig({}).TESSERA_ACCEPTED_ISSUERS).toBeUndefined();
    expect(loadConfig({ TESSERA_ACCEPTED_ISSUERS: 'https://eu1.auth.example.com/, https://us1.auth.example.com:8443' }).TESSERA_ACCEPTED_ISSUERS).toEqual(['https://eu1.auth.example.com', 'https://us1.auth.example.com:8443']);
    for (const value of ['http://eu1.auth.example.com', 'urn:tessera:issuer', 'https://eu1.auth.example.com/?x=1', 'https://a.example,']) {
      expect(() => loadConfig({ TESSERA_ACCEPTED_ISSUERS: value }), value).toThrow(/TESSERA_ACCEPTED_ISSUERS/);
    }
  });

  it('reads TESSERA_EGRESS_ALLOW: hostnames, addresses and CIDR ranges, lowercased; unset allows none', () => {
    expect(loadConfig({}).TESSERA_EGRESS_ALLOW).toBeUndefined();
    expect(loadConfig({ TESSERA_EGRESS_ALLOW: 'LocalHost, 127.0.0.1,10.0.0.0/8,::1, fd00::/8,jwks.internal.example' }).TESSERA_EGRESS_ALLOW).toEqual([
      'localhost',
      '127.0.0.1',
      '10.0.0.0/8',
      '::1',
      'fd00::/8',
      'jwks.internal.example',
    ]);
    for (const value of ['10.0.0.0/33', '999.1.1.1', 'http://localhost', 'localhost:8080', 'a,,b', '10.0.0.1,', '*.example.com']) {
      expect(() => loadConfig({ TESSERA_EGRESS_ALLOW: value }), value).toThrow(/TESSERA_EGRESS_ALLOW/);
    }
  });

  it('reads regions: the region, its peers by name, and refuses a peer list without a region and a secret', () => {
    const secret = 's'.repeat(32);
    const config = loadConfig({ TESSERA_REGION: 'eu1', TESSERA_PEER_REGIONS: 'us1=https://issuer.us1.internal:8443, ap2=https://10.0.0.2:8443/', TESSERA_PEER_SECRET: secret });
    expect(config.TESSERA_PEER_REGIONS).toEqual({ us1: 'https://issuer.us1.internal:8443', ap2: 'https://10.0.0.2:8443' });
    expect(config.TESSERA_PEER_TIMEOUT).toBe(5);
    expect(loadConfig({}).TESSERA_REGION).toBeUndefined();
    for (const bad of [{ TESSERA_REGION: 'EU1' }, { TESSERA_REGION: 'eu_1' }, { TESSERA_BARE_FAMILY_REGION: 'eu1' }]) {
      expect(() => loadConfig(bad)).toThrow(Object.keys(bad)[0]);
    }
    for (const peers of ['us1=http://x:1', 'us1', 'US1=https://x:1', 'us1=https://x:1,us1=https://y:1', 'eu1=https://x:1']) {
      expect(() => loadConfig({ TESSERA_REGION: 'eu1', TESSERA_PEER_REGIONS: peers, TESSERA_PEER_SECRET: secret })).toThrow(/TESSERA_PEER_REGIONS/);
    }
    expect(() => loadConfig({ TESSERA_REGION: 'eu1', TESSERA_PEER_REGIONS: 'us1=https://x:1' })).toThrow(/TESSERA_PEER_REGIONS: needs TESSERA_REGION and TESSERA_PEER_SECRET/);
    expect(() => loadConfig({ TESSERA_PEER_SECRET: 'short' })).toThrow(/TESSERA_PEER_SECRET/);
  });

  it('follows the peers\' mirrored topics with Kafka, or the regions TESSERA_MIRRORED_REGIONS names, or none', () => {
    const secret = 's'.repeat(32);
    const peers = { TESSERA_REGION: 'eu1', TESSERA_PEER_REGIONS: 'us1=https://x:1,ap2=https://y:1', TESSERA_PEER_SECRET: secret };
    expect(mirroredRegionsOf(loadConfig(peers))).toEqual([]);
    expect(mirroredRegionsOf(loadConfig({ ...peers, TESSERA_KAFKA_BROKERS: 'k:9092' }))).toEqual(['us1', 'ap2']);
    expect(mirroredRegionsOf(loadConfig({ ...peers, TESSERA_KAFKA_BROKERS: 'k:9092', TESSERA_MIRRORED_REGIONS: 'us1' }))).toEqual(['us1']);
    expect(mirroredRegionsOf(loadConfig({ ...peers, TESSERA_KAFKA_BROKERS: 'k:9092', TESSERA_MIRRORED_REGIONS: 'none' }))).toEqual([]);
    expect(loadConfig({}).TESSERA_KAFKA_ACCOUNT_TOPIC).toBe('tessera.accounts');
    expect(() => loadConfig({ TESSERA_MIRRORED_REGIONS: 'us1' })).toThrow(/TESSERA_MIRRORED_REGIONS: needs TESSERA_KAFKA_BROKERS/);
    expect(() => loadConfig({ TESSERA_KAFKA_BROKERS: 'k:9092', TESSERA_REGION: 'eu1', TESSERA_MIRRORED_REGIONS: 'eu1' })).toThrow(/TESSERA_MIRRORED_REGIONS: must not name/);
    for (const bad of ['US1', 'us1,,ap2', 'us1,us1', 'us-1']) {
      expect(() => loadConfig({ TESSERA_KAFKA_BROKERS: 'k:9092', TESSERA_MIRRORED_REGIONS: bad })).toThrow(/TESSERA_MIRRORED_REGIONS/);
    }
  });

  it('reads the peer link\'s failure detector, the family topic and the control region, with their defaults', () => {
    const defaults = loadConfig({});
    expect([defaults.TESSERA_PEER_REVOKE_TIMEOUT, defaults.TESSERA_PEER_FAILURES, defaults.TESSERA_PEER_PROBE_INTERVAL]).toEqual([1, 3, 1]);
    expect(defaults.TESSERA_KAFKA_FAMILY_TOPIC).toBe('tessera.families');
    expect(defaults.TESSERA_CONTROL_REGION).toBeUndefined();
    const set = loadConfig({ TESSERA_REGION: 'eu1', TESSERA_CONTROL_REGION: 'us1', TESSERA_PEER_REVOKE_TIMEOUT: '0.5', TESSERA_PEER_FAILURES: '5', TESSERA_PEER_PROBE_INTERVAL: '0.25' });
    expect([set.TESSERA_CONTROL_REGION, set.TESSERA_PEER_REVOKE_TIMEOUT, set.TESSERA_PEER_FAILURES, set.TESSERA_PEER_PROBE_INTERVAL]).toEqual(['us1', 0.5, 5, 0.25]);
    expect(() => loadConfig({ TESSERA_CONTROL_REGION: 'us1' })).toThrow(/TESSERA_CONTROL_REGION: needs TESSERA_REGION/);
    for (const bad of [{ TESSERA_REGION: 'eu1', TESSERA_CONTROL_REGION: 'US1' }, { TESSERA_PEER_FAILURES: '0' }, { TESSERA_PEER_FAILURES: '1.5' }, { TESSERA_PEER_PROBE_INTERVAL: '0' }, { TESSERA_PEER_REVOKE_TIMEOUT: '-1' }]) {
      expect(() => loadConfig(bad), JSON.stringify(bad)).toThrow(Object.keys(bad).at(-1)!);
    }
  });

  it('wants TLS certificate and key together', () => {
    expect(() => loadConfig({ TESSERA_TLS_CERT: 'cert.pem' })).toThrow(/TESSERA_TLS_CERT/);
    expect(loadConfig({ TESSERA_TLS_CERT: 'c', TESSERA_TLS_KEY: 'k' }).TESSERA_TLS_KEY).toBe('k');
  });

  it('refuses TESSERA_LEGACY_PORT equal to TESSERA_PORT, in one line naming the variable', () => {
    expect(() => loadConfig({ TESSERA_PORT: '9000', TESSERA_LEGACY_PORT: '9000' })).toThrow(/^invalid configuration: TESSERA_LEGACY_PORT: must differ from TESSERA_PORT[^\n]*$/);
    expect(loadConfig({ TESSERA_PORT: '9000', TESSERA_LEGACY_PORT: '9001' }).TESSERA_LEGACY_PORT).toBe(9001);
    // 0 is no port of its own but the system's pick, a different one for each listener.
    expect(loadConfig({ TESSERA_PORT: '0', TESSERA_LEGACY_PORT: '0' }).TESSERA_LEGACY_PORT).toBe(0);
  });

  it('takes TESSERA_REFRESH_REUSE=revoke-family', () => {
    expect(loadConfig({ TESSERA_REFRESH_REUSE: 'revoke-family' }).TESSERA_REFRESH_REUSE).toBe('revoke-family');
  });

  it('has the documented hardening defaults: admin listener, timeouts, connection caps, failure budgets', () => {
    expect(loadConfig({})).toMatchObject({
      TESSERA_ADMIN_HOST: '127.0.0.1',
      TESSERA_ADMIN_PORT: 9443,
      TESSERA_HEADERS_TIMEOUT: 10,
      TESSERA_REQUEST_TIMEOUT: 20,
      TESSERA_KEEP_ALIVE_TIMEOUT: 72,
      TESSERA_MAX_CONNECTIONS: 4096,
      TESSERA_MAX_CONNECTIONS_PER_ADDRESS: 256,
      TESSERA_THROTTLE_WINDOW: 300,
      TESSERA_THROTTLE_CREDENTIAL_FAILURES: 10,
      TESSERA_THROTTLE_ADDRESS_FAILURES: 100,
      TESSERA_THROTTLE_REFRESH_FAILURES: 100,
      TESSERA_THROTTLE_PROXY_FAILURES: 1000,
    });
  });

  it('takes TESSERA_ADMIN_PORT=off, a port, or 0, and refuses one shared with a public listener', () => {
    expect(loadConfig({ TESSERA_ADMIN_PORT: 'off' }).TESSERA_ADMIN_PORT).toBe('off');
    expect(loadConfig({ TESSERA_ADMIN_PORT: '9555' }).TESSERA_ADMIN_PORT).toBe(9555);
    expect(loadConfig({ TESSERA_ADMIN_PORT: '0', TESSERA_PORT: '0' }).TESSERA_ADMIN_PORT).toBe(0);
    expect(() => loadConfig({ TESSERA_ADMIN_PORT: 'on' })).toThrow(/TESSERA_ADMIN_PORT/);
    expect(() => loadConfig({ TESSERA_PORT: '9000', TESSERA_ADMIN_PORT: '9000' })).toThrow(/^invalid configuration: TESSERA_ADMIN_PORT: must differ/);
    expect(() => loadConfig({ TESSERA_LEGACY_PORT: '9001', TESSERA_ADMIN_PORT: '9001' })).toThrow(/TESSERA_ADMIN_PORT: must differ/);
  });

  it('takes the admin API over the network as an https origin, and bootstrap scopes as a list; refuses anything else naming the variable', () => {
    expect(loadConfig({ TESSERA_ADMIN_URL: 'https://issuer.internal:9443/' }).TESSERA_ADMIN_URL).toBe('https://issuer.internal:9443');
    for (const url of ['http://issuer.internal:9443', 'https://issuer.internal:9443/admin', 'https://user:pw@issuer.internal', 'not a url']) {
      expect(() => loadConfig({ TESSERA_ADMIN_URL: url }), url).toThrow(/TESSERA_ADMIN_URL/);
    }
    expect(loadConfig({ TESSERA_ADMIN_BOOTSTRAP_SCOPES: 'accounts:read, accounts:write,accounts:read' }).TESSERA_ADMIN_BOOTSTRAP_SCOPES).toEqual(['accounts:read', 'accounts:write']);
    expect(() => loadConfig({ TESSERA_ADMIN_BOOTSTRAP_SCOPES: 'accounts:read,' })).toThrow(/TESSERA_ADMIN_BOOTSTRAP_SCOPES/);
    expect(loadConfig({}).TESSERA_ADMIN_BOOTSTRAP_SCOPES).toBeUndefined();
  });

  it('takes fractional timeouts and a 0 failure budget (that limit off), and refuses headers longer than the request', () => {
    const config = loadConfig({ TESSERA_HEADERS_TIMEOUT: '0.5', TESSERA_REQUEST_TIMEOUT: '1.5', TESSERA_THROTTLE_REFRESH_FAILURES: '0' });
    expect([config.TESSERA_HEADERS_TIMEOUT, config.TESSERA_REQUEST_TIMEOUT, config.TESSERA_THROTTLE_REFRESH_FAILURES]).toEqual([0.5, 1.5, 0]);
    expect(() => loadConfig({ TESSERA_HEADERS_TIMEOUT: '30', TESSERA_REQUEST_TIMEOUT: '20' })).toThrow(/TESSERA_HEADERS_TIMEOUT: must not exceed TESSERA_REQUEST_TIMEOUT/);
    expect(() => loadConfig({ TESSERA_MAX_CONNECTIONS: '0' })).toThrow(/TESSERA_MAX_CONNECTIONS/);
    expect(() => loadConfig({ TESSERA_REQUEST_TIMEOUT: '0' })).toThrow(/TESSERA_REQUEST_TIMEOUT/);
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ TESSERA_PORT: '' }).TESSERA_PORT).toBe(8443);
  });

  describe('per role', () => {
    it('a relay without brokers refuses to start, naming the variable', () => {
      expect(() => loadConfig({}, { role: 'relay' })).toThrow(ConfigError);
      expect(() => loadConfig({}, { role: 'relay' })).toThrow('invalid configuration: TESSERA_KAFKA_BROKERS: the relay needs it: host:port[,host:port…]');
      expect(loadConfig({ TESSERA_KAFKA_BROKERS: 'localhost:9092' }, { role: 'relay' }).TESSERA_KAFKA_BROKERS).toBe('localhost:9092');
    });

    it('a Kafka-fed verifier without a JWKS URL is valid: its keys can come from the topic', () => {
      const config = loadConfig({ TESSERA_VERIFIER_SOURCE: 'kafka', TESSERA_KAFKA_BROKERS: 'localhost:9092' }, { role: 'verifier' });
      expect(config.TESSERA_ISSUER_JWKS_URL).toBeUndefined();
    });

    it('the other roles need nothing beyond what every process does', () => {
      for (const role of ['all-in-one', 'issuer', 'verifier'] as const) expect(() => loadConfig({}, { role })).not.toThrow();
    });

    it('a configuration error carries a stable code', () => {
      expect(() => loadConfig({ TESSERA_PORT: 'x' })).toThrow(expect.objectContaining({ code: 'ERR_CONFIG' }));
    });
  });
});
