import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

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

  it('wants TLS certificate and key together', () => {
    expect(() => loadConfig({ TESSERA_TLS_CERT: 'cert.pem' })).toThrow(/TESSERA_TLS_CERT/);
    expect(loadConfig({ TESSERA_TLS_CERT: 'c', TESSERA_TLS_KEY: 'k' }).TESSERA_TLS_KEY).toBe('k');
  });

  it('refuses TESSERA_LEGACY_PORT equal to TESSERA_PORT, in one line naming the variable', () => {
    expect(() => loadConfig({ TESSERA_PORT: '9000', TESSERA_LEGACY_PORT: '9000' })).toThrow(/^invalid configuration: TESSERA_LEGACY_PORT: must differ from TESSERA_PORT[^\n]*$/);
    expect(loadConfig({ TESSERA_PORT: '9000', TESSERA_LEGACY_PORT: '9001' }).TESSERA_LEGACY_PORT).toBe(9001);
  });

  it('takes TESSERA_REFRESH_REUSE=revoke-family', () => {
    expect(loadConfig({ TESSERA_REFRESH_REUSE: 'revoke-family' }).TESSERA_REFRESH_REUSE).toBe('revoke-family');
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ TESSERA_PORT: '' }).TESSERA_PORT).toBe(8443);
  });
});
