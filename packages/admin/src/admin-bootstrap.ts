import { readFileSync } from 'node:fs';
import { adminScopes } from '@tessera/events';
import { createAdminTokenService, InvalidAdminTokenInput, isAdminScope, listAdminTokens, validOperatorToken } from '@tessera/admin-tokens';
import type { EventStore, GuardedEventStore } from '@tessera/event-store';
import { epochSeconds, StartFailure, type Host } from '@tessera/host';
import type { SecretHashers } from '@tessera/tokens';
import { untilApplied } from './until-applied.js';

export interface AdminBootstrapParts {
  readonly hashers: SecretHashers;
  /** Resolves once the log's secret-hashing key is checked and the read models have caught up: nothing is appended before. */
  readonly writable: Promise<unknown>;
}

/**
 * TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE: the first admin token without a shell on the server. The
 * file and the scopes are checked as the process is wired, so a bad one stops the start with one
 * line; the token is registered (its keyed hash, name `bootstrap`) once the log may be written,
 * only when the log has never held an admin token: a token revoked since keeps the file from
 * granting access again. The process is ready only after, so the token works once /readyz says so.
 * The token itself is never logged.
 */
export function wireAdminBootstrap(host: Host, store: GuardedEventStore, parts: AdminBootstrapParts): void {
  const file = host.config.TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE;
  if (file === undefined) return;
  const adminToken = operatorTokenIn(file);
  const scopes = host.config.TESSERA_ADMIN_BOOTSTRAP_SCOPES ?? [...adminScopes];
  const unknown = scopes.filter((scope) => !isAdminScope(scope));
  if (unknown.length > 0) throw new StartFailure(`TESSERA_ADMIN_BOOTSTRAP_SCOPES: unknown scope ${unknown.join(', ')}; the scopes are ${adminScopes.join(', ')}`);
  host.untilReady(
    parts.writable.then(async () => {
      if (await anyAdminToken(store)) {
        host.log.info('the log holds an admin token already: TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE is not registered');
        return;
      }
      const service = createAdminTokenService({ store, hasher: parts.hashers.current(), now: () => epochSeconds(host.clock), actor: 'bootstrap' });
      const registered = await service.register({ name: 'bootstrap', scopes, adminToken });
      // Ready means the token works: the admin token read model has it before /readyz says so.
      if (registered.position !== undefined) await untilApplied(host, registered.position);
      host.log.info({ adminTokenId: registered.id, scopes: registered.scopes }, 'bootstrap admin token registered from TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE');
    }),
  );
}

async function anyAdminToken(store: Pick<EventStore, 'readAll'>): Promise<boolean> {
  return (await listAdminTokens(store)).length > 0;
}

/** The token in the file, without the line break an editor or `echo` adds; a start failure naming the file otherwise, never its content. */
function operatorTokenIn(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    // Cast: Node's file errors carry a code (ENOENT, EACCES), which says why without echoing the file.
    throw new StartFailure(`TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE ${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    // The service's own rule, checked now so a bad file stops the start rather than a later registration.
    return validOperatorToken(text.trim());
  } catch (error) {
    if (error instanceof InvalidAdminTokenInput) throw new StartFailure(`TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE ${file}: not a usable admin token: ${error.message}`);
    throw error;
  }
}
