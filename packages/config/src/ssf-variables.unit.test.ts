import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { publicUrlOf } from './ssf-variables.js';

describe('the Shared Signals variables', () => {
  it('TESSERA_PUBLIC_URL defaults to https://TESSERA_HOST:TESSERA_PORT, brackets an IPv6 host, and drops a trailing slash', () => {
    expect(publicUrlOf(loadConfig({}))).toBe('https://127.0.0.1:8443');
    expect(publicUrlOf(loadConfig({ TESSERA_HOST: '::1', TESSERA_PORT: '9000' }))).toBe('https://[::1]:9000');
    expect(publicUrlOf(loadConfig({ TESSERA_PUBLIC_URL: 'https://auth.example.com/' }))).toBe('https://auth.example.com');
  });

  it('TESSERA_PUBLIC_URL defaults to the port the public listener bound, which TESSERA_PORT=0 leaves to the system', () => {
    expect(publicUrlOf(loadConfig({ TESSERA_PORT: '0' }), 43_210)).toBe('https://127.0.0.1:43210');
    expect(publicUrlOf(loadConfig({ TESSERA_PUBLIC_URL: 'https://auth.example.com' }), 43_210)).toBe('https://auth.example.com');
  });

  it.each(['http://auth.example.com', 'auth.example.com', 'https://auth.example.com/?x=1', 'https://auth.example.com/#f'])('refuses TESSERA_PUBLIC_URL=%s, naming the variable', (value) => {
    expect(() => loadConfig({ TESSERA_PUBLIC_URL: value })).toThrow(/^invalid configuration: TESSERA_PUBLIC_URL: must be an https:\/\/ URL/);
  });

  it('refuses a TESSERA_SSF_ALLOW_HTTP_PUSH that is not true or false, and a non-positive TESSERA_SSF_PAUSE_AFTER', () => {
    expect(() => loadConfig({ TESSERA_SSF_ALLOW_HTTP_PUSH: 'yes' })).toThrow(/TESSERA_SSF_ALLOW_HTTP_PUSH: must be true or false/);
    expect(() => loadConfig({ TESSERA_SSF_PAUSE_AFTER: '0' })).toThrow(/TESSERA_SSF_PAUSE_AFTER/);
    expect(loadConfig({}).TESSERA_SSF_ALLOW_HTTP_PUSH).toBe('false');
  });

  it('TESSERA_SSF_LEASE_TTL defaults to 30 s and is at least 3; TESSERA_SSF_REPLICA_URL is an http(s) URL kept without a trailing slash', () => {
    expect(loadConfig({}).TESSERA_SSF_LEASE_TTL).toBe(30);
    expect(loadConfig({ TESSERA_SSF_LEASE_TTL: '3' }).TESSERA_SSF_LEASE_TTL).toBe(3);
    expect(() => loadConfig({ TESSERA_SSF_LEASE_TTL: '2' })).toThrow(/TESSERA_SSF_LEASE_TTL/);
    expect(loadConfig({ TESSERA_SSF_REPLICA_URL: 'https://tessera-issuer-0.tessera-issuer-pods:8443/' }).TESSERA_SSF_REPLICA_URL).toBe('https://tessera-issuer-0.tessera-issuer-pods:8443');
    expect(() => loadConfig({ TESSERA_SSF_REPLICA_URL: 'ftp://replica' })).toThrow(/TESSERA_SSF_REPLICA_URL/);
    expect(loadConfig({}).TESSERA_REPLICA_ID).toBeUndefined();
  });

  it('TESSERA_SSF_ACK_DEADLINE defaults to 10 s, takes 0 (answered again at once) to 3600, whole seconds only', () => {
    expect(loadConfig({}).TESSERA_SSF_ACK_DEADLINE).toBe(10);
    expect(loadConfig({ TESSERA_SSF_ACK_DEADLINE: '0' }).TESSERA_SSF_ACK_DEADLINE).toBe(0);
    expect(loadConfig({ TESSERA_SSF_ACK_DEADLINE: '3600' }).TESSERA_SSF_ACK_DEADLINE).toBe(3600);
    for (const refused of ['-1', '3601', '1.5', 'soon']) expect(() => loadConfig({ TESSERA_SSF_ACK_DEADLINE: refused })).toThrow(/TESSERA_SSF_ACK_DEADLINE/);
  });

  it('TESSERA_SSF_EMPTY_POLL_INTERVAL defaults to 1 s, takes 0 (no limit) to 300, whole seconds only', () => {
    expect(loadConfig({}).TESSERA_SSF_EMPTY_POLL_INTERVAL).toBe(1);
    expect(loadConfig({ TESSERA_SSF_EMPTY_POLL_INTERVAL: '0' }).TESSERA_SSF_EMPTY_POLL_INTERVAL).toBe(0);
    expect(loadConfig({ TESSERA_SSF_EMPTY_POLL_INTERVAL: '300' }).TESSERA_SSF_EMPTY_POLL_INTERVAL).toBe(300);
    for (const refused of ['-1', '301', '0.5', 'soon']) expect(() => loadConfig({ TESSERA_SSF_EMPTY_POLL_INTERVAL: refused })).toThrow(/TESSERA_SSF_EMPTY_POLL_INTERVAL/);
  });
});
