import { createPublicKey, createPrivateKey } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { archiveKeyFile, archivePublicKeys, fingerprintOf, InvalidPinFile, liveSegments, readManifest, readPinFile, sha256, verifyArchive, type ArchivePins } from '@tessera/archive';
import { readArchivePins } from '@tessera/archiving';
import { archiveDirOf } from '@tessera/config';
import { NoEventStore, openEventStore } from '@tessera/event-store-factory';
import { CliError, NotFound } from '../cli-error.js';
import type { CommandContext } from '../command-context.js';
import { parseCommandOptions } from '../command-options.js';
import { print, shown } from '../output.js';
import { CodedError } from '@tessera/contracts';

/** The archive failed its verification: exit 1, the one line naming the first break. */
export class ArchiveBroken extends CodedError {
  readonly code = 'ERR_ARCHIVE_BROKEN';
  constructor(message: string) {
    super(message);
    this.name = 'ArchiveBroken';
  }
}

const usage = 'usage: tessera archive status [--json] | tessera archive verify [--pin FILE] [--json]';

/**
 * `tessera archive status | verify`: the archive in TESSERA_ARCHIVE_DIR (default `archive/` in the
 * data folder), read only. Both check it against its pins: `--pin FILE` (an auditor's, kept out of
 * band), or else the anchors in the event log beside it (read only; nothing is made when there is no log).
 */
export async function runArchive(command: CommandContext, argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  const { values } = parseCommandOptions(rest, { json: { type: 'boolean' }, pin: { type: 'string' } });
  const json = values.json ?? false;
  const archiveDir = archiveDirOf(command.config);
  if (subcommand !== 'status' && subcommand !== 'verify') throw new CliError(usage);
  if (subcommand === 'status' && values.pin !== undefined) throw new CliError(usage);
  const pins = values.pin !== undefined ? pinFile(values.pin) : await logPins(command);
  if (!existsSync(join(archiveDir, 'manifest')) && !existsSync(join(archiveDir, 'keys')) && pins?.head === undefined) {
    throw new NotFound(`no archive at ${archiveDir}: nothing has been archived yet (TESSERA_ARCHIVE_DIR, default archive/ in the data folder)`);
  }
  return subcommand === 'status' ? status(command, archiveDir, json, pins) : verify(archiveDir, json, pins);
}

function pinFile(file: string): ArchivePins {
  try {
    return readPinFile(file);
  } catch (error) {
    if (error instanceof InvalidPinFile) throw new CliError(error.message);
    throw error;
  }
}

/** The anchors the event log beside the archive holds; undefined when there is no log here, or it holds none yet. */
async function logPins(command: CommandContext): Promise<ArchivePins | undefined> {
  let store;
  try {
    store = await openEventStore(command.config, { mustExist: true, readOnly: true });
  } catch (error) {
    if (error instanceof NoEventStore) return undefined;
    throw error;
  }
  try {
    const pins = await readArchivePins(store);
    return pins.keys.size === 0 && pins.head === undefined ? undefined : pins;
  } finally {
    await store.close();
  }
}

function status(command: CommandContext, archiveDir: string, json: boolean, pins: ArchivePins | undefined): number {
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
    pinned_by: pins?.source ?? null,
    pinned_keys: pins === undefined ? null : [...pins.keys],
    pinned_head: pins?.head === undefined ? null : { sequence: pins.head.sequence, sha256: pins.head.sha256 },
    hot_log_bytes: log === undefined ? null : bytes(log) + bytes(`${log}-wal`),
    audit_index_bytes: bytes(index) + bytes(`${index}-wal`),
    hot_retention_seconds: config.TESSERA_HOT_RETENTION,
    audit_retention_seconds: config.TESSERA_AUDIT_RETENTION,
  };
  const lines = [
    `archive ${shown(archiveDir)}: ${body.segments} segments, ${body.archived_events} events, ${body.archive_bytes} bytes`,
    `  events from ${body.oldest_archived ?? '-'} to ${body.newest_archived ?? '-'}; ${body.deleted_segments} segments deleted past TESSERA_AUDIT_RETENTION (${body.audit_retention_seconds} s)`,
    `  manifest: ${body.manifest_entries} entries, head sha256 ${body.manifest_head_sha256 ?? '-'}`,
    `  archive key ${body.current_key ?? '(none yet)'}; every key in keys/: ${body.keys.join(', ') || '-'}`,
    pins === undefined
      ? '  NOT pinned: no anchors in the event log here (tessera archive verify --pin FILE checks a copy against pins kept out of band)'
      : `  pinned by ${pins.source}: keys ${[...pins.keys].join(', ') || '-'}; head entry ${pins.head?.sequence ?? '-'} sha256 ${pins.head?.sha256 ?? '-'}`,
    `  hot log ${body.hot_log_bytes ?? '(EventStoreDB)'} bytes, audit index ${body.audit_index_bytes} bytes, hot window ${body.hot_retention_seconds} s (TESSERA_HOT_RETENTION)`,
  ];
  print(json, body, lines.join('\n'));
  return 0;
}

function verify(archiveDir: string, json: boolean, pins: ArchivePins | undefined): number {
  const result = verifyArchive(archiveDir, pins === undefined ? {} : { pins });
  const body = {
    ok: result.ok,
    entries: result.entries,
    segments: result.segments,
    events: result.rows,
    head_sha256: result.headSha256,
    keys: result.keys,
    first_break: result.firstBreak ?? null,
    pinned_by: result.pinnedBy ?? null,
  };
  if (!result.ok) {
    if (json) process.stdout.write(`${JSON.stringify(body)}\n`);
    const broken = result.firstBreak!;
    throw new ArchiveBroken(`the archive is broken at manifest entry ${broken.sequence}, ${broken.file}: ${broken.problem}`);
  }
  const against =
    result.pinnedBy === undefined
      ? 'NOT pinned: any key in keys/ was trusted and a cut tail cannot be seen; run beside the data folder, or pass --pin FILE'
      : `against the pins of ${result.pinnedBy}`;
  print(json, body, `archive ${shown(archiveDir)} verified: ${result.entries} manifest entries, ${result.segments} segments (${result.rows} events), chain and signatures whole; head sha256 ${result.headSha256 ?? '-'}; ${against}`);
  return 0;
}

const bytes = (file: string) => (existsSync(file) ? statSync(file).size : 0);
