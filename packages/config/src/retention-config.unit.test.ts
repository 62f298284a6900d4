import { describe, expect, it } from 'vitest';
import { archiveDirOf, loadConfig } from './config.js';

describe('retention and archive settings', () => {
  it('defaults: a 14-day hot window, 400 days of audit trail, the archive in the data folder, a run every hour', () => {
    const config = loadConfig({ TESSERA_DATA_DIR: '/srv/tessera/' });
    expect(config).toMatchObject({ TESSERA_HOT_RETENTION: 1_209_600, TESSERA_AUDIT_RETENTION: 34_560_000, TESSERA_ARCHIVE_INTERVAL: 3600 });
    expect(archiveDirOf(config)).toBe('/srv/tessera/archive');
    expect(archiveDirOf(loadConfig({ TESSERA_ARCHIVE_DIR: '/mnt/archive' }))).toBe('/mnt/archive');
  });

  it('a hot window of seconds is allowed, so the whole cycle can run in a test', () => {
    expect(loadConfig({ TESSERA_HOT_RETENTION: '2', TESSERA_AUDIT_RETENTION: '10' }).TESSERA_HOT_RETENTION).toBe(2);
  });

  it('refuses an audit retention shorter than the hot window, naming the variable', () => {
    expect(() => loadConfig({ TESSERA_HOT_RETENTION: '86400', TESSERA_AUDIT_RETENTION: '3600' })).toThrow(/TESSERA_AUDIT_RETENTION: must be at least TESSERA_HOT_RETENTION/);
  });

  it('refuses a hot window that is not a whole number of seconds', () => {
    expect(() => loadConfig({ TESSERA_HOT_RETENTION: '0' })).toThrow(/TESSERA_HOT_RETENTION/);
    expect(() => loadConfig({ TESSERA_HOT_RETENTION: '1.5' })).toThrow(/TESSERA_HOT_RETENTION/);
  });
});
