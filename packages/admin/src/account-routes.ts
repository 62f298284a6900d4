import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  accountChangeAnswer,
  createAccountService,
  createdAccountAnswer,
  legacyKeyAnswer,
  permissionPattern,
  rotatedKeyAnswer,
  type AccountServiceDeps,
} from '@tessera/accounts';
import { DomainError } from '@tessera/domain';
import type { CommandStore, EventStore } from '@tessera/event-store';
import { problemResponses } from '@tessera/http';
import type { SecretHashers } from '@tessera/tokens';
import type { AdminGuard } from './admin-auth.js';
import type { AccountListing } from './account-listing.js';
import { accountPage, accountPageLimit, accountScanBudget } from './account-pages.js';

export interface AccountRoutesOptions {
  readonly guard: AdminGuard;
  readonly store: CommandStore & Pick<EventStore, 'readAll'>;
  /** What the list and the lookup answer from: the accounts as this process has followed the log. */
  readonly listing: AccountListing;
  /** New secrets are hashed with the log's current key; where this process does not hold it, a write is a 503. */
  readonly hashers: SecretHashers;
  /** Epoch seconds. */
  readonly now: () => number;
  /** How long a cut must be remembered, asked only with revoke_tokens (docs/decisions/0011). */
  readonly longestTokenLifetime: () => Promise<number>;
  /** The control region's fence (docs/decisions/0018): throws unless this region may write accounts now. */
  readonly checkAccountWrite?: (() => void) | undefined;
  /** The egress policy's word on a plain-http JWKS URL (only to a host TESSERA_EGRESS_ALLOW names). */
  readonly plainHttpAllowed: (url: URL) => boolean;
  /** Each append, once durable: the process applies it here before the answer (read-your-writes). */
  readonly onAppended?: AccountServiceDeps['onAppended'];
}

/**
 * An identifier in a path: characters a URL carries as they are, at most 100 of them, the router's
 * limit for a path segment (longer is a 414 before any route), so every value the schema takes reaches the route.
 */
export const pathId = z.string().regex(/^[A-Za-z0-9._~-]{1,100}$/);
const accountId = pathId;
const params = z.strictObject({ account_id: accountId });
const events = z.array(z.string());
const tokensRevokedBefore = z.string().optional().describe('With revoke_tokens: access tokens issued before this instant are refused from now on');
const revokeTokens = z.boolean().optional().describe('Also refuse the access tokens issued before now (a cut), as the CLI\'s --revoke-tokens');
const permissions = z.array(z.string().regex(permissionPattern)).max(256).describe('Letters, digits and : . _ * - only, each at most 128 characters');
const AccountRowSchema = z.object({
  account_id: z.string(),
  name: z.string(),
  permissions: z.array(z.string()),
  api_login_ids: z.array(z.string()),
  legacy_api_ids: z.array(z.string()),
  status: z.enum(['enabled', 'disabled']).describe('disabled: no token and no refresh until enabled (POST …/enable)'),
});
const AccountChangeSchema = z.object({ account_id: z.string(), events, tokens_revoked_before: tokensRevokedBefore });
const errors = problemResponses(400, 401, 403, 404, 409, 414, 503);
/** A body that may be left out (a bare `curl -X POST`): the document says so (openapi.ts reads this mark). */
export const bodyOptional = { 'x-body-optional': true } as const;
const tags = ['admin'];
const security = [{ bearer: [] }];

/**
 * Accounts on the admin listener: what `tessera accounts` does, over HTTP, through the same account
 * service (its validation, its events), behind the control region's fence and the log's secret-hashing
 * key. Reads need accounts:read, changes accounts:write. Each event names `admin:<admin token id>`,
 * the request id and the source address. A secret is in the answer that makes it, once, and never
 * in a list or a log line: no route takes one in its path or query.
 */
export async function accountRoutes(app: FastifyInstance, options: AccountRoutesOptions): Promise<void> {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const reading = options.guard.requireScope('accounts:read');
  const writing = options.guard.requireScope('accounts:write');
  /** The account service for one request; the fence is checked before anything is read or appended. */
  const service = (request: FastifyRequest) => {
    options.checkAccountWrite?.();
    return createAccountService({
      store: options.store,
      hasher: options.hashers.current(),
      now: options.now,
      // The guard ran first (onRequest), so the admin token is known here.
      actor: `admin:${request.adminToken!.id}`,
      metadata: { requestId: String(request.id), sourceAddress: request.ip },
      longestTokenLifetime: options.longestTokenLifetime,
      ...(options.onAppended ? { onAppended: options.onAppended } : {}),
    });
  };

  routes.post(
    '/admin/v1/accounts',
    {
      onRequest: writing,
      schema: {
        summary: 'Create an account: its API Login ID and Transaction Key (and with legacy an API ID and key) are in this answer once (scope accounts:write)',
        tags,
        security,
        body: z.strictObject({
          name: z.string().min(1).max(200).describe('1 to 200 characters, not blank, no control characters'),
          permissions,
          legacy: z.boolean().optional().describe('Also a v1 credential (apiid, apikey)'),
        }),
        response: {
          201: z.object({ account_id: z.string(), api_login_id: z.string(), transaction_key: z.string(), apiid: z.string().optional(), apikey: z.string().optional() }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const { name, legacy } = request.body;
      const account = await service(request).create({ name, permissions: request.body.permissions, legacy: legacy ?? false });
      return noStore(reply).code(201).send(createdAccountAnswer(account));
    },
  );

  routes.get(
    '/admin/v1/accounts',
    {
      onRequest: reading,
      schema: {
        summary: 'The accounts in the order they were made, a page at a time, never a secret or a hash (scope accounts:read)',
        tags,
        security,
        querystring: z.strictObject({
          name: z.string().min(1).max(200).optional().describe('Only the accounts with exactly this name'),
          q: z
            .string()
            .min(1)
            .max(200)
            .optional()
            .describe(`A search: only the accounts whose name, account id, API Login ID or legacy API ID holds this text, in any case. A filtered page looks at ${accountScanBudget} accounts at most, so it may hold fewer than limit (none, even) with a next_cursor to go on from`),
          limit: z.coerce.number().int().min(1).max(accountPageLimit.max).optional().describe(`At most this many accounts (default ${accountPageLimit.default})`),
          cursor: z.string().min(1).max(256).optional().describe('next_cursor of the page before'),
        }),
        response: { 200: z.object({ accounts: z.array(AccountRowSchema), next_cursor: z.string().nullable() }), ...errors },
      },
    },
    async (request, reply) => {
      const page = accountPage(options.listing, request.query);
      return noStore(reply).send({ accounts: page.accounts, next_cursor: page.nextCursor });
    },
  );

  routes.get(
    '/admin/v1/accounts/:account_id',
    {
      onRequest: reading,
      schema: { summary: 'One account, never a secret or a hash (scope accounts:read)', tags, security, params, response: { 200: AccountRowSchema, ...errors } },
    },
    async (request, reply) => {
      const account = options.listing.row(request.params.account_id);
      if (!account) throw new DomainError('ERR_ACCOUNT_NOT_FOUND', `no account ${request.params.account_id}`);
      return noStore(reply).send(account);
    },
  );

  routes.post(
    '/admin/v1/accounts/:account_id/rotate-key',
    {
      onRequest: writing,
      schema: {
        summary: "A new Transaction Key for one of the account's API Login IDs (its first when none is named), in this answer once; the old key is refused from now on (scope accounts:write)",
        tags,
        security,
        params,
        body: z.strictObject({ api_login_id: z.string().min(1).max(128).optional(), revoke_tokens: revokeTokens }).nullish(),
        ...bodyOptional,
        response: { 200: z.object({ account_id: z.string(), api_login_id: z.string(), transaction_key: z.string(), tokens_revoked_before: tokensRevokedBefore }), ...errors },
      },
    },
    async (request, reply) => {
      const rotated = await service(request).rotateKey(
        { accountId: request.params.account_id, ...(request.body?.api_login_id === undefined ? {} : { apiLoginId: request.body.api_login_id }) },
        { revokeTokens: request.body?.revoke_tokens ?? false },
      );
      return noStore(reply).send(rotatedKeyAnswer(rotated));
    },
  );

  routes.put(
    '/admin/v1/accounts/:account_id/permissions',
    {
      onRequest: writing,
      schema: {
        summary: "Set the account's permissions, as a whole set (an empty list removes every one) (scope accounts:write)",
        tags,
        security,
        params,
        body: z.strictObject({ permissions, revoke_tokens: revokeTokens }),
        response: { 200: AccountChangeSchema, ...errors },
      },
    },
    async (request, reply) => {
      const changed = await service(request).setPermissions(request.params.account_id, request.body.permissions, { revokeTokens: request.body.revoke_tokens ?? false });
      return noStore(reply).send(accountChangeAnswer(changed));
    },
  );

  routes.put(
    '/admin/v1/accounts/:account_id/audiences',
    {
      onRequest: writing,
      schema: {
        summary: "Set the RFC 8707 audiences the account's tokens may be issued for, as a whole set (empty: the default audience only) (scope accounts:write)",
        tags,
        security,
        params,
        body: z.strictObject({ audiences: z.array(z.string().min(1).max(512)).max(20).describe('Absolute URIs without a fragment') }),
        response: { 200: z.object({ account_id: z.string(), audiences: z.array(z.string()), events }), ...errors },
      },
    },
    async (request, reply) => {
      const changed = await service(request).setAudiences(request.params.account_id, request.body.audiences);
      return noStore(reply).send({ account_id: changed.accountId, audiences: request.body.audiences, events: [...changed.events] });
    },
  );

  routes.put(
    '/admin/v1/accounts/:account_id/client-keys',
    {
      onRequest: writing,
      schema: {
        summary: "Set the public keys the account's private_key_jwt assertions are checked with: a JWKS, the https URL it is fetched from, or none (scope accounts:write)",
        tags,
        security,
        params,
        body: z.union([
          z.strictObject({ jwks: z.looseObject({ keys: z.array(z.record(z.string(), z.unknown())) }).describe('A JWKS of public keys only (at most 10), each with a distinct kid') }),
          z.strictObject({ jwks_uri: z.string().min(1).max(2048).describe('https (plain http only to a host TESSERA_EGRESS_ALLOW names)') }),
          z.strictObject({ none: z.literal(true).describe('Remove every key: private_key_jwt is refused') }),
        ]),
        response: {
          200: z.union([z.object({ account_id: z.string(), kids: z.array(z.string()), events }), z.object({ account_id: z.string(), jwks_url: z.string(), events })]),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const accounts = service(request);
      const body = request.body;
      if ('jwks_uri' in body) {
        const changed = await accounts.setClientKeysUrl(request.params.account_id, body.jwks_uri, { plainHttpAllowed: options.plainHttpAllowed });
        return noStore(reply).send({ account_id: changed.accountId, jwks_url: changed.jwksUri, events: [...changed.events] });
      }
      const changed = await accounts.setClientKeys(request.params.account_id, 'jwks' in body ? body.jwks : { keys: [] });
      return noStore(reply).send({ account_id: changed.accountId, kids: [...changed.kids], events: [...changed.events] });
    },
  );

  routes.put(
    '/admin/v1/accounts/:account_id/dpop',
    {
      onRequest: writing,
      schema: {
        summary: "Whether the account's token requests must carry a DPoP proof (RFC 9449) (scope accounts:write)",
        tags,
        security,
        params,
        body: z.strictObject({ dpop_bound_access_tokens: z.boolean().describe('true: a token request without a proof is refused') }),
        response: { 200: z.object({ account_id: z.string(), dpop_bound_access_tokens: z.boolean(), events }), ...errors },
      },
    },
    async (request, reply) => {
      const required = request.body.dpop_bound_access_tokens;
      const changed = await service(request).setClientDpop(request.params.account_id, required);
      return noStore(reply).send({ account_id: changed.accountId, dpop_bound_access_tokens: required, events: [...changed.events] });
    },
  );

  routes.post(
    '/admin/v1/accounts/:account_id/legacy-keys',
    {
      onRequest: writing,
      schema: {
        summary: 'Add a legacy (v1) credential: its API ID and key are in this answer once (scope accounts:write)',
        tags,
        security,
        params,
        body: z.strictObject({}).nullish(),
        ...bodyOptional,
        response: { 201: z.object({ account_id: z.string(), apiid: z.string(), apikey: z.string() }), ...errors },
      },
    },
    async (request, reply) => {
      const added = await service(request).addLegacyKey(request.params.account_id);
      return noStore(reply).code(201).send(legacyKeyAnswer(added));
    },
  );

  routes.post(
    '/admin/v1/accounts/:account_id/legacy-keys/:apiid/revoke',
    {
      onRequest: writing,
      schema: {
        summary: 'Revoke a legacy (v1) credential by its API ID; its tokens live out their lifetime unless revoke_tokens (scope accounts:write)',
        tags,
        security,
        params: z.strictObject({ account_id: accountId, apiid: pathId }),
        body: z.strictObject({ revoke_tokens: revokeTokens }).nullish(),
        ...bodyOptional,
        response: { 200: AccountChangeSchema, ...errors },
      },
    },
    async (request, reply) => {
      const changed = await service(request).revokeLegacyKey(request.params.account_id, request.params.apiid, { revokeTokens: request.body?.revoke_tokens ?? false });
      return noStore(reply).send(accountChangeAnswer(changed));
    },
  );
}

function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store');
}
