import { createPublicKey, createPrivateKey } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { archiveKeyFile, archivePublicKeys, fingerprintOf, liveSegments, readManifest, sha256, verifyArchive } from '@tessera/archive';
import { archiveDirOf } from '@tessera/config';
import { CliError, NotFound } from '../cli-error.js';
import type { CommandContext } from '../command-context.js';
import { parseCommandOptions } from '../command-options.js';
import { print, shown } from '../output.js';

/** The archive failed its verification: exit 1, the one line naming the first break. */
export class ArchiveBroken extends Error {
  readonly code = 'ERR_ARCHIVE_BROKEN';
  constructor(message: string) {
    super(message);
    this.name = 'ArchiveBroken';
  }
}

/** `tessera archive status | verify`: the archive in TESSERA_ARCHIVE_DIR (default `archive/` in the data folder), read only. */
export async function runArchive(command: CommandContext, argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  const { values } = parseCommandOptions(rest, { json: { type: 'boolean' } });
  const json = values.json ?? false;
  const archiveDir = archiveDirOf(command.config);
  if (subcommand !== 'status' && subcommand !== 'verify') throw new CliError('usage: tessera archive status [--json] | tessera archive verify [--json]');
  if (!existsSync(join(archiveDir, 'manifest')) && !existsSync(join(archiveDir, 'keys'))) {
    throw new NotFound(`no archive at ${archiveDir}: nothing has been archived yet (TESSERA_ARCHIVE_DIR, default archive/ in the data folder)`);
  }
  return subcommand === 'status' ? status(command, archiveDir, json) : verify(archiveDir, json);
}

function status(command: CommandContext, archiveDir: string, json: boolean): number {
  const { config } = command;
  const entries = readManifest(archiveDir);
  const segments = liveSegments(entries);
  const last = entries[entries.length - 1];
  const keyFile = archiveKeyFile(join(config.TESSERA_DATA_DIR, 'keys'));
  const currentKey = existsSync(keyFile) ? fingerprintOf(createPublicKey(createPrivateKey(readFileSync(keyFile)))) : null;
  const log = config.TESSERA_EVENT_STORE === undefined ? join(config.TESSERA_DATA_DIR, 'events.db') : config.TESSERA_EVENT_STORE.startsWith('sqlite:') ? config.TESSERA_EVENT_STORE.slice(7) : undefined;
  const index = join(config.TESSERA_DATA_DIR, 'audit-index.db');
  const times = segments.flatMap(({ segment }) => [segment.min_time, segment.max_time]).sort();
  const body = {
    archive_dir: archiveDir,
    segments: segments.length,
    archived_events: segments.reduce((sum, { segment }) => sum + segment.rows, 0),
    archive_bytes: segments.reduce((sum, { segment }) => sum + segment.bytes, 0),
    oldest_archived: times[0] ?? null,
    newest_archived: times[times.length - 1] ?? null,
    manifest_entries: entries.length,
    deleted_segments: entries.reduce((sum, { entry }) => sum + (entry.kind === 'deletion' ? entry.deleted.length : 0), 0),
    manifest_head_sha256: last === undefined ? null : sha256(last.bytes),
    current_key: currentKey,
    keys: archivePublicKeys(archiveDir).map((key) => key.fingerprint),
    hot_log_bytes: log === undefined ? null : bytes(log) + bytes(`${log}-wal`),
    audit_index_bytes: bytes(index) + bytes(`${index}-wal`),
    hot_retention_seconds: config.TESSERA_HOT_RETENTION,
    audit_retention_seconds: config.TESSERA_AUDIT_RETENTION,
  };
  const lines = [
    `archive ${shown(archiveDir)}: ${body.segments} segments, ${body.archived_events} events, ${body.archive_bytes} bytes`,
    `  events from ${body.oldest_archived ?? '-'} to ${body.newest_archived ?? '-'}; ${body.deleted_segments} segments deleted past TESSERA_AUDIT_RETENTION (${body.audit_retention_seconds} s)`,
    `  manifest: ${body.manifest_entries} entries, head sha256 ${body.manifest_head_sha256 ?? '-'}`,
    `  archive key ${body.current_key ?? '(none yet)'}; every key used: ${body.keys.join(', ') || '-'}`,
    `  hot log ${body.hot_log_bytes ?? '(EventStoreDB)'} bytes, audit index ${body.audit_index_bytes} bytes, hot window ${body.hot_retention_seconds} s (TESSERA_HOT_RETENTION)`,
  ];
  print(json, body, lines.join('\n'));
  return 0;
}

function verify(archiveDir: string, json: boolean): number {
  const result = verifyArchive(archiveDir);
  const body = {
    ok: result.ok,
    entries: result.entries,
    segments: result.segments,
    events: result.rows,
    head_sha256: result.headSha256,
    keys: result.keys,
    first_break: result.firstBreak ?? null,
  };
  if (!result.ok) {
    if (json) process.stdout.write(`${JSON.stringify(body)}\n`);
    const broken = result.firstBreak!;
    throw new ArchiveBroken(`the archive is broken at manifest entry ${broken.sequence}, ${broken.file}: ${broken.problem}`);
  }
  print(json, body, `archive ${shown(archiveDir)} verified: ${result.entries} manifest entries, ${result.segments} segments (${result.rows} events), chain and signatures whole; head sha256 ${result.headSha256 ?? '-'}`);
  return 0;
}

const bytes = (file: string) => (existsSync(file) ? statSync(file).size : 0);
