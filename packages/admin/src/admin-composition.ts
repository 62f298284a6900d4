import type { AccountDisabled, AccountEnabled, AccountEvent, FamilyEvent, TokenCutEvent } from '@tessera/events';
import { AdminTokenDirectory } from '@tessera/admin-tokens';
import type { AuditReadModel } from '@tessera/audit';
import { archiveDirOf } from '@tessera/config';
import { egressPolicy } from '@tessera/egress';
import type { GuardedEventStore, LogReader } from '@tessera/event-store';
import { epochSeconds, registerGauges, type Host } from '@tessera/host';
import type { AdminRouteRegistrar } from '@tessera/server';
import type { SecretHashers } from '@tessera/tokens';
import { createAdminGuard, type AdminGuard } from './admin-auth.js';
import { AccountListing } from './account-listing.js';
import { accountRoutes, type AccountRoutesOptions } from './account-routes.js';
import { accountStatusRoutes } from './account-status-routes.js';
import { createAccountStatus, type AccountStatus } from './account-status.js';
import { auditRoutes } from './audit-routes.js';
import { FamiliesCatchingUp } from './families-catching-up.js';
import { accountFamilyRoutes, type AccountFamilyRoutesOptions } from './account-family-routes.js';
import { archiveStatusRoutes } from './archive-status-routes.js';
import { signingKeyRoutes, type SigningKeyRoutesOptions } from './signing-key-routes.js';
import { consoleRoutes, type ConsoleRoutesOptions } from './console/console-routes.js';
import { ConsoleSessions } from './console/console-session.js';
import { startFamiliesThread, type FamiliesPages, type FamiliesReadModel, type FamiliesThread } from './families-thread.js';
import { createOperatorRevocation, type OperatorRevocation } from './operator-revocation.js';
import { revocationRoutes } from './revocation-routes.js';
import { untilApplied } from './until-applied.js';

/** What the process hands the admin API so its changes hold here before the answer (read-your-writes). */
export interface AdminApiHooks {
  /** The process's secret-hashing keys: admin tokens are checked under the key each was hashed with. */
  readonly hashers: SecretHashers;
  readonly onFamilyEvent?: ((event: FamilyEvent) => void) | undefined;
  readonly onCut?: ((event: TokenCutEvent) => void) | undefined;
  /** An account disabled or enabled here: the issuer's directory in this process, before the answer. */
  readonly onAccountStatus?: ((event: AccountDisabled | AccountEnabled) => void) | undefined;
  /** The audit index this process keeps: its queries join the admin API, behind audit:read. */
  readonly audit?: AuditReadModel | undefined;
  /** The control region's fence: an account write (an account's cut) is refused where it throws. */
  readonly checkAccountWrite?: (() => void) | undefined;
  /** The issuer's public signing keys: their rotation dates join the admin API, behind audit:read. */
  readonly signingKeys?: SigningKeyRoutesOptions['keys'] | undefined;
}

export interface AdminApi {
  /** For other admin routes: `onRequest: admin.guard.requireScope('tokens:revoke')`. */
  readonly guard: AdminGuard;
  /** The admin routes, for the admin listener only: never the public one. */
  readonly routes: AdminRouteRegistrar;
  /**
   * The admin token read model, for the process's own follower of the whole log (with the account
   * and key read models): admin token events are few, and one more subscription would cost a read
   * of the log on every append.
   */
  readonly readers: readonly LogReader[];
}

/**
 * How long an account revocation waits for the families read model, built in the background on
 * first use, before it answers 503 with Retry-After: every answer has a bound.
 */
const familiesCatchUpMs = 2_000;

/**
 * Wires the admin API into a process: the admin token read model (followed by the
 * process, see `readers`), the families read model and the routes.
 *
 * The families read model follows every token event from the start of the log, which costs every
 * issuance one more read and parse of its event (about a tenth more server CPU per get-oauth-token),
 * and reading a long history costs seconds of CPU. So it
 * starts on the first account revocation, on a thread of its own at the lowest CPU priority (token
 * requests keep the core), and follows from then on: a deployment that never revokes an account's
 * tokens never pays for it. That first revocation waits up to 2 s for it to catch up, then answers
 * 503 with Retry-After while it goes on.
 */
export function wireAdminApi(host: Host, store: GuardedEventStore, hooks: AdminApiHooks): AdminApi {
  const now = () => epochSeconds(host.clock);
  const tokens = new AdminTokenDirectory(hooks.hashers, now);
  let thread: FamiliesThread | undefined;
  const familiesThread = (): FamiliesThread => {
    // One that failed (the store unreachable when it opened, say) is replaced by the next request.
    if (thread?.state().failure !== undefined) {
      void thread.close();
      thread = undefined;
    }
    if (!thread) {
      const started = startFamiliesThread({ config: host.config, clock: host.clock, log: host.log });
      thread = started;
      host.onClose(() => started.close());
    }
    return thread;
  };
  const families: FamiliesReadModel = {
    longestTokenLifetime: () => familiesThread().longestTokenLifetime(),
    liveFamiliesOnceAt: (position, accountId, timeoutMs) => familiesThread().liveFamiliesOnceAt(position, accountId, timeoutMs),
  };
  const familiesReady = () => familiesThread().caughtUp(familiesCatchUpMs);
  registerGauges(host.metrics, {
    tessera_admin_families_entries: { help: 'Live token families the admin API\'s families read model holds (built on the first account revocation)', read: () => thread?.state().size ?? 0 },
  });
  // The console's sessions are signed with a key derived from the secret-hashing key, which every
  // replica's data folder holds: a session signed by one replica is good on every other.
  const consoleGate = { sessions: new ConsoleSessions(hooks.hashers, now), tokens };
  const guard = createAdminGuard({ tokens, console: consoleGate });
  const revocation = createOperatorRevocation({ store, families, now, onFamilyEvent: hooks.onFamilyEvent, onCut: hooks.onCut, checkAccountWrite: hooks.checkAccountWrite });
  const status = createAccountStatus({ store, families, now, onFamilyEvent: hooks.onFamilyEvent, onCut: hooks.onCut, onStatusChange: hooks.onAccountStatus, checkAccountWrite: hooks.checkAccountWrite });
  const archiveDir = hooks.audit === undefined ? undefined : archiveDirOf(host.config);
  const egress = egressPolicy(host.config);
  const listing = new AccountListing();
  const accounts: Omit<AccountRoutesOptions, 'guard'> = {
    store,
    listing,
    hashers: hooks.hashers,
    now,
    checkAccountWrite: hooks.checkAccountWrite,
    plainHttpAllowed: (url) => egress.allowsPlainHttp(url),
    // As the revoke-tokens route: a cut waits for the families read model, else 503 with Retry-After.
    longestTokenLifetime: async () => {
      if (!(await familiesReady())) throw new FamiliesCatchingUp();
      return families.longestTokenLifetime();
    },
    onAppended: async ({ events, position }) => {
      for (const event of events) if (isCut(event)) hooks.onCut?.(event);
      // Read-your-writes: a rotated key or changed permission holds in this process before the answer.
      if (position !== undefined) await untilApplied(host, position);
    },
  };
  const familyList = { store, families: { liveFamiliesPage: (...page) => familiesThread().liveFamiliesPage(...page) } satisfies FamiliesPages, familiesReady, listing };
  const console = { ...consoleGate, now };
  return { guard, routes: adminRoutes({ guard, revocation, status, familiesReady, audit: hooks.audit, archiveDir, accounts, familyList, console, signingKeys: hooks.signingKeys, nowSeconds: now, now: () => host.clock.now() }), readers: [tokens.reader, listing.reader] };
}

function isCut(event: AccountEvent): event is TokenCutEvent {
  return event.type === 'AccountTokensRevoked' || event.type === 'CredentialTokensRevoked';
}


/** The admin routes alone, guarded: the guard's plugin first, so every /admin/v1/* path needs a token. */
export function adminRoutes(parts: {
  guard: AdminGuard;
  revocation: OperatorRevocation;
  /** Disabling and enabling accounts; without it their routes are not served. */
  status?: AccountStatus | undefined;
  familiesReady?: () => Promise<boolean>;
  audit?: AuditReadModel | undefined;
  /** The archive folder, whose public keys the admin API publishes beside the audit queries. */
  archiveDir?: string | undefined;
  /** The account routes' parts (accounts:read, accounts:write); without them the routes are not served. */
  accounts?: Omit<AccountRoutesOptions, 'guard'> | undefined;
  /** An account's live families (audit:read); without it the route is not served. */
  familyList?: Omit<AccountFamilyRoutesOptions, 'guard'> | undefined;
  /** The admin console (/console/) and its sessions; without it the console is not served. */
  console?: ConsoleRoutesOptions | undefined;
  /** The issuer's public signing keys; without them their route is not served. */
  signingKeys?: SigningKeyRoutesOptions['keys'] | undefined;
  /** Epoch seconds, for the signing keys' route (default: from `now`). */
  nowSeconds?: () => number;
  /** Epoch milliseconds, for the audit queries' `at` checks. */
  now: () => number;
}): AdminRouteRegistrar {
  return async (app) => {
    await app.register(parts.guard.plugin);
    await app.register(revocationRoutes, { guard: parts.guard, revocation: parts.revocation, familiesReady: parts.familiesReady });
    if (parts.accounts) await app.register(accountRoutes, { ...parts.accounts, guard: parts.guard });
    if (parts.status) await app.register(accountStatusRoutes, { guard: parts.guard, status: parts.status, familiesReady: parts.familiesReady });
    if (parts.familyList) await app.register(accountFamilyRoutes, { ...parts.familyList, guard: parts.guard });
    if (parts.console) await app.register(consoleRoutes, parts.console);
    const { archiveDir, signingKeys } = parts;
    if (parts.audit && archiveDir !== undefined) await app.register(archiveStatusRoutes, { guard: parts.guard, archiveDir });
    if (signingKeys) await app.register(signingKeyRoutes, { guard: parts.guard, keys: signingKeys, now: parts.nowSeconds ?? (() => Math.floor(parts.now() / 1000)) });
    if (parts.audit) await auditRoutes({ audit: parts.audit, requireScope: (scope) => parts.guard.requireScope(scope), now: parts.now, archiveDir: parts.archiveDir })(app);
  };
}
