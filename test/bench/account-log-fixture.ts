/**
 * A busy event log written by direct inserts, for the benchmarks that need a large one (the audit
 * index, the admin console): the HTTP path would take hours to make a million events. The file is
 * made by the store itself first (or by `tessera start`), so it has the adapter's schema; the
 * fixture then writes rows into it.
 *
 * `count` events over `accounts` accounts, interleaved as a busy log is (round r holds every
 * account's r-th event), over 30 days from October 2026. Each account: registration, a v5 and a v1
 * credential, then families (issue, three refreshes, a revocation one time in four) and v1 tokens.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { TesseraEvent } from '@tessera/events';

const start = Date.parse('2026-10-01T00:00:00Z');
const spanMs = 30 * 86_400_000;
const accessTtl = 3600;
const legacyTtl = 1800;
const refreshTtl = 604_800;

/** Deterministic, so two runs measure the same log. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const id = () => randomBytes(16).toString('base64url');
/** One hash for every secret: nothing signs in with these credentials, the log only has to hold them. */
const hash = randomBytes(32).toString('base64url');

export interface FixtureAccount {
  readonly accountId: string;
  readonly credentialId: string;
  readonly apiLoginId: string;
  readonly legacyCredentialId: string;
  readonly apiId: string;
  step: number;
  family?: { familyId: string; generation: number };
}

/** An account's next event at `at` (epoch seconds): what a merchant's workers do over a month. */
function nextEvent(account: FixtureAccount, at: number, next: () => number): { stream: string; event: TesseraEvent } {
  const { accountId } = account;
  const step = account.step++;
  if (step === 0) return { stream: `account-${accountId}`, event: { type: 'AccountRegistered', v: 1, accountId, name: `Shop ${accountId.slice(0, 8)}`, permissions: ['transaction:charge'], at } };
  if (step === 1) return { stream: `account-${accountId}`, event: { type: 'ApiCredentialIssued', v: 1, accountId, credentialId: account.credentialId, apiLoginId: account.apiLoginId, transactionKeyHash: hash, at } };
  if (step === 2) return { stream: `account-${accountId}`, event: { type: 'LegacyCredentialIssued', v: 1, accountId, credentialId: account.legacyCredentialId, apiId: account.apiId, apiKeyHash: hash, at } };
  const roll = next();
  if (roll < 0.1) {
    return { stream: `legacytokens-${accountId}`, event: { type: 'LegacyTokenIssued', v: 1, accountId, credentialId: account.legacyCredentialId, apiId: account.apiId, jti: id(), issuedAt: at, expiresAt: at + legacyTtl } };
  }
  const family = account.family;
  if (family && family.generation < 3) {
    family.generation += 1;
    return { stream: `tokenfamily-${family.familyId}`, event: { type: 'TokenRotated', v: 1, familyId: family.familyId, generation: family.generation, jti: id(), rejectsUntil: at + accessTtl, ...grant(account, at) } };
  }
  if (family && roll < 0.3) {
    account.family = undefined;
    return {
      stream: `tokenfamily-${family.familyId}`,
      event: { type: 'TokenRevoked', v: 1, familyId: family.familyId, accountId, generation: family.generation, revokedAt: at, accessExpiresAt: at + accessTtl, rejectsUntil: at + accessTtl },
    };
  }
  const familyId = id();
  account.family = { familyId, generation: 0 };
  return { stream: `tokenfamily-${familyId}`, event: { type: 'TokenIssued', v: 1, familyId, generation: 0, jti: id(), ...grant(account, at) } };
}

/** What an issuance or a rotation at `at` grants the account's v5 credential. */
function grant(account: FixtureAccount, at: number) {
  return { accountId: account.accountId, credentialId: account.credentialId, apiLoginId: account.apiLoginId, refreshTokenHash: hash, scope: ['transaction:charge'], issuedAt: at, accessExpiresAt: at + accessTtl, refreshExpiresAt: at + refreshTtl };
}

type Insert = (stream: string, event: TesseraEvent, metadata: object, recordedAt: number) => void;

/**
 * Opens the log for bulk inserts (no fsync: a fixture, made again if the machine dies) and hands
 * `write` an insert and a way to run a batch of them in one transaction.
 */
function withInserts(file: string, write: (insert: Insert, inTransaction: (batch: () => void) => void) => void): void {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    db.pragma('busy_timeout = 5000');
    const statement = db.prepare('INSERT INTO events (event_id, stream, revision, type, payload, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const revisions = new Map<string, number>();
    const insert: Insert = (stream, event, metadata, recordedAt) => {
      const revision = revisions.get(stream) ?? 0;
      revisions.set(stream, revision + 1);
      statement.run(randomUUID(), stream, revision, event.type, JSON.stringify(event), JSON.stringify(metadata), recordedAt);
    };
    write(insert, (batch) => db.transaction(batch)());
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/** Writes the busy month into `file` (which must hold the store's schema) and returns its accounts. */
export function writeAccountLog(
  file: string,
  options: { events: number; accounts: number; next: () => number; log: (message: string) => void },
): { seconds: number; bytes: number; accounts: readonly FixtureAccount[] } {
  const started = process.hrtime.bigint();
  const accounts: FixtureAccount[] = Array.from({ length: options.accounts }, () => ({
    accountId: randomUUID(),
    credentialId: id(),
    apiLoginId: `tsl_${id()}`,
    legacyCredentialId: id(),
    apiId: `tla_${id()}`,
    step: 0,
  }));
  const rounds = Math.ceil(options.events / options.accounts);
  let written = 0;
  withInserts(file, (insert, inTransaction) => {
    for (let round = 0; round < rounds; round += 1) {
      inTransaction(() => {
        for (const [index, account] of accounts.entries()) {
          if (written >= options.events) return;
          // Rounds are spread over the month; within one, accounts follow each other by milliseconds.
          const recordedAt = Math.floor(start + (round * spanMs) / rounds + (index * (spanMs / rounds)) / options.accounts);
          const { stream, event } = nextEvent(account, Math.floor(recordedAt / 1000), options.next);
          insert(stream, event, { requestId: randomUUID(), sourceAddress: `10.${index % 250}.${round % 250}.${(index * 7) % 250}` }, recordedAt);
          written += 1;
        }
      });
      if (round % 20 === 0) options.log(`log: ${written} / ${options.events} events`);
    }
  });
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, bytes: statSync(file).size, accounts };
}

/**
 * Appends `perAccount` families issued at `nowMs` to each of `accounts`, after the month: live
 * families (their refresh tokens good for a week), which the month's families no longer are.
 */
export function writeLiveFamilies(file: string, accounts: readonly FixtureAccount[], perAccount: number, nowMs: number): void {
  const at = Math.floor(nowMs / 1000);
  withInserts(file, (insert, inTransaction) =>
    inTransaction(() => {
      for (const account of accounts) {
        for (let n = 0; n < perAccount; n += 1) {
          const familyId = id();
          insert(`tokenfamily-${familyId}`, { type: 'TokenIssued', v: 1, familyId, generation: 0, jti: id(), ...grant(account, at) }, { requestId: randomUUID(), sourceAddress: '10.0.0.1' }, nowMs);
        }
      }
    }),
  );
}
