import type { FamilyEvent, TokenCutEvent } from '@tessera/contracts';
import { AdminTokenDirectory } from '@tessera/admin-tokens';
import { followLog, type GuardedEventStore, type LogReader, type ResilientSubscription } from '@tessera/event-store';
import { nowSeconds, type Host, type RouteRegistrar } from '@tessera/server';
import { createSecretHasher, openKeyFolders } from '@tessera/tokens';
import { AccountFamilies } from './account-families.js';
import { createAdminGuard, type AdminGuard } from './admin-auth.js';
import { createOperatorRevocation, type OperatorRevocation } from './operator-revocation.js';
import { revocationRoutes } from './revocation-routes.js';

/** What the process hands the admin API so its changes hold here before the answer (read-your-writes). */
export interface AdminApiHooks {
  readonly onFamilyEvent?: ((event: FamilyEvent) => void) | undefined;
  readonly onCut?: ((event: TokenCutEvent) => void) | undefined;
}

export interface AdminApi {
  /** For other admin routes (audit): `onRequest: admin.guard.requireScope('audit:read')`. */
  readonly guard: AdminGuard;
  /** The admin routes, for the admin listener only: never the public one. */
  readonly routes: RouteRegistrar;
}

/**
 * Wires the admin API into a process (issue 12): the admin token read model and the families read
 * model, following the log together on one subscription of their own (one more read of the log per
 * append, not two), and the routes. They do not gate the process's readiness — a process whose admin
 * API is still reading serves tokens — the admin routes answer 503 until they have caught up.
 */
export function wireAdminApi(host: Host, store: GuardedEventStore, hooks: AdminApiHooks = {}): AdminApi {
  const { hashingKey } = openKeyFolders(host.config.TESSERA_DATA_DIR, host.config.TESSERA_KEYS_DIR);
  const tokens = new AdminTokenDirectory(createSecretHasher(hashingKey));
  const families = new AccountFamilies();
  const following = follow(host, store, [tokens.reader, families]);
  const forget = setInterval(() => families.forgetExpired(nowSeconds()), 60_000);
  forget.unref();
  host.onClose(async () => clearInterval(forget));
  const guard = createAdminGuard({ tokens, ready: following.live });
  const revocation = createOperatorRevocation({ store, families, now: nowSeconds, onFamilyEvent: hooks.onFamilyEvent, onCut: hooks.onCut });
  return { guard, routes: adminRoutes({ guard, revocation, familiesReady: following.live }) };
}

/** The admin routes alone, guarded: the guard's plugin first, so every /admin/v1/* path needs a token. */
export function adminRoutes(parts: { guard: AdminGuard; revocation: OperatorRevocation; familiesReady?: () => boolean }): RouteRegistrar {
  return async (app) => {
    await app.register(parts.guard.plugin);
    await app.register(revocationRoutes, { guard: parts.guard, revocation: parts.revocation, familiesReady: parts.familiesReady });
  };
}

function follow(host: Host, store: GuardedEventStore, readers: LogReader[]): ResilientSubscription {
  // Only a read model that throws on an event gets here (dropped connections are retried by the guard).
  const subscription = followLog(store, readers, (error) => host.fatal(error, 'an admin read model failed to apply an event'));
  subscription.caughtUp.catch(() => undefined);
  host.onClose(() => subscription.close());
  return subscription;
}
