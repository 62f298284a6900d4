import { isIP } from 'node:net';
import { z } from 'zod';
import { checkKafkaSecurity, kafkaSecurityVariables } from './kafka-security-variables.js';
import { ssfVariables } from './ssf-variables.js';
import { CodedError } from '@tessera/contracts';

/** Environment, parsed once at boot. A bad value stops the start and names the variable. */
const seconds = (fallback: number) => z.coerce.number().int().positive().max(31_536_000).default(fallback);
const port = z.coerce.number().int().min(0).max(65535);
/** Fractions allowed, so a test can ask for half a second; an hour is far past any sane request. */
const timeout = (fallback: number) => z.coerce.number().positive().max(3600).default(fallback);
const cap = (fallback: number) => z.coerce.number().int().positive().max(1_000_000).default(fallback);
/** A failure budget; 0 turns that limit off. */
const budget = (fallback: number) => z.coerce.number().int().min(0).max(1_000_000).default(fallback);

/** Short lowercase alphanumerics, as in packages/tokens (a family id's prefix); not imported, so config depends on nothing. */
const regionName = z.string().regex(/^[a-z0-9]{1,16}$/, 'must be 1 to 16 lowercase letters or digits');

/** `name=https://host:port,…`: where the other regions' issuers are (docs/multi-region.md). */
const peerRegions = z.string().transform((value, context) => {
  const peers: Record<string, string> = {};
  for (const entry of value.split(',')) {
    const match = /^([a-z0-9]{1,16})=(https:\/\/[^\s,]+)$/.exec(entry.trim());
    if (!match || !URL.canParse(match[2]!) || Object.hasOwn(peers, match[1]!)) {
      context.addIssue({ code: 'custom', message: 'must be name=https://host:port[,name=https://host:port…], each region named once' });
      return z.NEVER;
    }
    peers[match[1]!] = new URL(match[2]!).origin;
  }
  return peers;
});

/** `a,b,…` region names, or `none`. */
const mirroredRegions = z.string().transform((value, context) => {
  if (value.trim() === 'none') return [];
  const regions = value.split(',').map((region) => region.trim());
  if (regions.some((region) => !/^[a-z0-9]{1,16}$/.test(region)) || new Set(regions).size !== regions.length) {
    context.addIssue({ code: 'custom', message: 'must be region names separated by commas (each 1 to 16 lowercase letters or digits, once), or none' });
    return z.NEVER;
  }
  return regions;
});

/** proxy-addr's names for address ranges, as fastify's trustProxy takes them. */
const proxyRangeNames = new Set(['loopback', 'linklocal', 'uniquelocal']);
const isProxyAddress = (entry: string) => {
  if (proxyRangeNames.has(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
};

/** `address[/prefix],…` or `loopback`/`linklocal`/`uniquelocal`: the hops whose X-Forwarded-For is believed. */
/** Comma-separated https:// URLs without query or fragment, kept without a trailing slash as TESSERA_PUBLIC_URL is. */
const acceptedIssuers = z.string().transform((value, context) => {
  const entries = value.split(',').map((entry) => entry.trim());
  const isIssuer = (entry: string) => URL.canParse(entry) && new URL(entry).protocol === 'https:' && new URL(entry).search === '' && new URL(entry).hash === '';
  if (entries.some((entry) => !isIssuer(entry))) {
    context.addIssue({ code: 'custom', message: 'must be https:// URLs without query or fragment, separated by commas' });
    return z.NEVER;
  }
  return entries.map((entry) => entry.replace(/\/+$/, ''));
});

const trustedProxies = z.string().transform((value, context) => {
  const entries = value.split(',').map((entry) => entry.trim());
  if (entries.some((entry) => !isProxyAddress(entry))) {
    context.addIssue({ code: 'custom', message: 'must be IP addresses or CIDR ranges (10.0.0.0/8, ::1), or loopback, linklocal, uniquelocal, separated by commas' });
    return z.NEVER;
  }
  return entries;
});

/** A DNS name, as a URL's host may be: letters, digits and hyphens in dot-separated labels. */
const hostnamePattern = /^(?=.{1,253}\.?$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;
/** An address or range as TESSERA_TRUSTED_PROXIES takes one, or a hostname that is not a malformed address (999.1.1.1). */
const isEgressEntry = (entry: string) => (isProxyAddress(entry) && !proxyRangeNames.has(entry)) || (hostnamePattern.test(entry) && !/^[0-9.]+$/.test(entry));

/**
 * `host,address,address/prefix,…`: what the egress policy lets an outbound request reach although
 * its address is loopback, private or otherwise refused (a hostname also may be reached over plain
 * http). Lowercased, so a hostname matches whatever case the URL spells it in.
 */
const egressAllowList = z.string().transform((value, context) => {
  const entries = value.split(',').map((entry) => entry.trim().toLowerCase());
  if (entries.some((entry) => !isEgressEntry(entry))) {
    context.addIssue({ code: 'custom', message: 'must be hostnames, IP addresses or CIDR ranges (localhost, 127.0.0.1, 10.0.0.0/8, ::1), separated by commas' });
    return z.NEVER;
  }
  return entries;
});

/** `scope,scope,…`: names as admin scopes are spelled; which exist is checked where they are used (config depends on nothing). */
const adminScopeList = z.string().transform((value, context) => {
  const scopes = value.split(',').map((scope) => scope.trim());
  if (scopes.some((scope) => !/^[a-z]{1,32}:[a-z]{1,32}$/.test(scope))) {
    context.addIssue({ code: 'custom', message: 'must be admin scopes separated by commas (e.g. accounts:read,accounts:write)' });
    return z.NEVER;
  }
  return [...new Set(scopes)];
});

/** An https URL of an admin listener, without path, query or fragment; kept as its origin. */
const adminUrl = z.string().transform((value, context) => {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (!url || url.protocol !== 'https:' || (url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    context.addIssue({ code: 'custom', message: 'must be the https URL of an admin listener, e.g. https://issuer.internal:9443 (no path, query or credentials)' });
    return z.NEVER;
  }
  return url.origin;
});

export const ConfigSchema = z
  .object({
    TESSERA_DATA_DIR: z.string().min(1).default('./data'),
    /** Private signing keys (default `keys/` in the data folder). The secret-hashing key stays in the data folder (docs/decisions/0008). */
    TESSERA_KEYS_DIR: z.string().min(1).optional(),
    TESSERA_HOST: z.string().min(1).default('127.0.0.1'),
    TESSERA_PORT: port.default(8443),
    TESSERA_LEGACY_PORT: port.optional(),
    /** The admin listener (/metrics, /healthz, /readyz, later the admin API): private, like Hydra's admin port. */
    TESSERA_ADMIN_HOST: z.string().min(1).default('127.0.0.1'),
    TESSERA_ADMIN_PORT: z.union([z.literal('off'), port]).default(9443),
    /**
     * A file holding an admin token the operator made (43+ characters, e.g. 32 random bytes in
     * base64url): registered at the start of an issuer (its keyed hash only) when the log holds no
     * admin token yet, so a first token needs no shell on the server. Ignored once one exists.
     */
    TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE: z.string().min(1).optional(),
    /** The bootstrap token's scopes, comma-separated; default every scope. Checked against the scopes at start. */
    TESSERA_ADMIN_BOOTSTRAP_SCOPES: adminScopeList.optional(),
    /** The CLI drives this admin listener (`https://host:port`) instead of the data folder (`tessera accounts …`). */
    TESSERA_ADMIN_URL: adminUrl.optional(),
    /** The admin token the CLI presents to TESSERA_ADMIN_URL, in a file (never on the command line). */
    TESSERA_ADMIN_TOKEN_FILE: z.string().min(1).optional(),
    /** The CA certificate (PEM) the CLI trusts TESSERA_ADMIN_URL's certificate with; default the system's. */
    TESSERA_ADMIN_CA_FILE: z.string().min(1).optional(),
    TESSERA_TLS_CERT: z.string().min(1).optional(),
    TESSERA_TLS_KEY: z.string().min(1).optional(),
    TESSERA_ACCESS_TOKEN_TTL: seconds(3600),
    TESSERA_REFRESH_TOKEN_TTL: seconds(604_800),
    TESSERA_LEGACY_TOKEN_TTL: seconds(1800),
    TESSERA_EVENT_STORE: z
      .string()
      .regex(/^(esdb(\+discover)?:\/\/|sqlite:)/, 'must be esdb://… or sqlite:<file>')
      .optional(),
    TESSERA_KAFKA_BROKERS: z
      .string()
      .regex(/^[^\s,]+:\d+(,[^\s,]+:\d+)*$/, 'must be host:port[,host:port…]')
      .optional(),
    TESSERA_KAFKA_TOPIC: z.string().min(1).default('tessera.revocations'),
    /** Account events (credentials, permissions, cuts), published when TESSERA_REGION is set, for other regions' issuers. */
    TESSERA_KAFKA_ACCOUNT_TOPIC: z.string().min(1).default('tessera.accounts'),
    /** Family events (keyed hashes, generations, expiries), published when TESSERA_REGION is set: what lets another region check a refresh token it is asked to revoke. */
    TESSERA_KAFKA_FAMILY_TOPIC: z.string().min(1).default('tessera.families'),
    /** TLS and SASL towards Kafka, for every Kafka client of the process (kafkaSecurityOf). */
    ...kafkaSecurityVariables,
    /**
     * Regions whose topics MirrorMaker 2 copies into this region's Kafka as `<region>.<topic>`;
     * default the regions of TESSERA_PEER_REGIONS. `none`: follow no mirrored topic.
     */
    TESSERA_MIRRORED_REGIONS: mirroredRegions.optional(),
    TESSERA_ISSUER: z.string().min(1).default('urn:tessera:issuer'),
    /**
     * Further `iss` values this process's verifiers accept, beside TESSERA_ISSUER and its own
     * TESSERA_PUBLIC_URL: the other regions' TESSERA_PUBLIC_URL, which their OAuth 2.0 door's tokens
     * carry, those of a refresh forwarded here from them included (docs/oauth.md, Regions).
     */
    TESSERA_ACCEPTED_ISSUERS: acceptedIssuers.optional(),
    TESSERA_CLOCK_SKEW: z.coerce.number().int().min(0).max(600).default(60),
    /** A used refresh token presented again: `keep` (the interface's rule: docs/interface.md) or `revoke-family` (RFC 9700 section 4.14.2; docs/decisions/0010). */
    TESSERA_REFRESH_REUSE: z.enum(['keep', 'revoke-family']).default('keep'),
    /**
     * DPoP (RFC 9449) nonces at the token endpoint. `required`: every proof must carry a nonce the
     * server gave out in the last 2 to 4 minutes (use_dpop_nonce and a DPoP-Nonce header otherwise),
     * so a proof made ahead of time is useless. `off`: proofs are checked without one.
     */
    TESSERA_DPOP_NONCE: z.enum(['off', 'required']).default('off'),
    /** Seconds to finish the TLS handshake and send the request headers. */
    TESSERA_HEADERS_TIMEOUT: timeout(10),
    /** Seconds to send the whole request, body included, from its first byte: a stalled body gets 408. */
    TESSERA_REQUEST_TIMEOUT: timeout(20),
    /** Seconds an idle kept-alive connection stays open: above the 60 s idle timeout of common load balancers, so they close first. */
    TESSERA_KEEP_ALIVE_TIMEOUT: timeout(72),
    /** Open connections per listener; past it a new connection is closed at once. */
    TESSERA_MAX_CONNECTIONS: cap(4096),
    /** Open connections per listener from one source address (a proxy in front is one address: raise it there). */
    TESSERA_MAX_CONNECTIONS_PER_ADDRESS: cap(256),
    /**
     * Proxies in front of the listeners (load balancer, NGINX) whose X-Forwarded-For is believed:
     * the client's address, for throttles, logs and audit, is the nearest address in that header
     * not in this list. Unset: the header is ignored, so a client cannot choose its own address.
     */
    TESSERA_TRUSTED_PROXIES: trustedProxies.optional(),
    /**
     * Hosts, addresses and CIDR ranges an outbound request to a URL a user registered (a client's
     * JWKS) may reach although the address is loopback, link-local, private or otherwise refused
     * (docs/decisions/0027). Unset: only public addresses, over https.
     */
    TESSERA_EGRESS_ALLOW: egressAllowList.optional(),
    /** Seconds in which each failure budget below refills completely. */
    TESSERA_THROTTLE_WINDOW: timeout(300),
    /** Failed get-oauth-token or /v1/authenticate attempts per credential id (API Login ID, API ID) from one address. */
    TESSERA_THROTTLE_CREDENTIAL_FAILURES: budget(10),
    /** Failed get-oauth-token or /v1/authenticate attempts from one address, whatever the credential. */
    TESSERA_THROTTLE_ADDRESS_FAILURES: budget(100),
    /** Failed refresh-oauth-token or revoke-oauth-token attempts from one address. */
    TESSERA_THROTTLE_REFRESH_FAILURES: budget(100),
    /**
     * Failed token operations of every kind that came through one trusted proxy (the connection's
     * address, when X-Forwarded-For named the client): what rotating that header buys at most.
     */
    TESSERA_THROTTLE_PROXY_FAILURES: budget(1000),
    TESSERA_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Where a verifier's revocation projection comes from: the event log, or Kafka (a verifier in another region). */
    TESSERA_VERIFIER_SOURCE: z.enum(['log', 'kafka']).default('log'),
    /** The issuer's JWKS, for a Kafka-fed verifier that has no access to the log. */
    TESSERA_ISSUER_JWKS_URL: z.url().optional(),
    /** This issuer's region: new family ids are homed here (`<region>_…`). Unset: no region, bare ids as before. */
    TESSERA_REGION: regionName.optional(),
    /** The home of bare (pre-region) family ids; default this issuer's own region. Set it to the original region elsewhere. */
    TESSERA_BARE_FAMILY_REGION: regionName.optional(),
    TESSERA_PEER_REGIONS: peerRegions.optional(),
    /** Authenticates the issuer-to-issuer link (docs/decisions/0012); never logged. */
    TESSERA_PEER_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
    /** Seconds a forwarded refresh or revoke waits for the home region before answering 503. */
    TESSERA_PEER_TIMEOUT: timeout(5),
    /** Seconds a forwarded revoke waits for the home region before this region decides it from its check material. */
    TESSERA_PEER_REVOKE_TIMEOUT: timeout(1),
    /** Consecutive failed exchanges with a peer region (forwards or probes) after which it is marked unreachable. */
    TESSERA_PEER_FAILURES: z.coerce.number().int().min(1).max(1000).default(3),
    /** Seconds between probes of each peer region; a probe unanswered within it has failed. */
    TESSERA_PEER_PROBE_INTERVAL: timeout(1),
    /** The region that writes accounts (epoch 0), the same in every region; `tessera regions promote-control` moves it. Unset: no fence. */
    TESSERA_CONTROL_REGION: regionName.optional(),
    /** Milliseconds an audit query (events, access-at; the API and `tessera audit`) may run before it is stopped: 503, CLI exit 4. */
    TESSERA_AUDIT_QUERY_BUDGET_MS: z.coerce.number().int().min(10).max(600_000).default(2000),
    /** The Shared Signals transmitter and the public URL it names (docs/shared-signals.md). */
    ...ssfVariables,
    /** Seconds a closed stream stays in the hot log before it is archived and removed (docs/decisions/0017). */
    TESSERA_HOT_RETENTION: z.coerce.number().int().min(1).max(315_360_000).default(1_209_600),
    /** Seconds the audit trail is kept, hot and archived together; archive segments past it are deleted, on the record. */
    TESSERA_AUDIT_RETENTION: z.coerce.number().int().min(1).max(3_153_600_000).default(34_560_000),
    /** Where the archive's segments, manifest and public keys live; default `archive/` in the data folder. */
    TESSERA_ARCHIVE_DIR: z.string().min(1).optional(),
    /** Seconds between archiving runs. */
    TESSERA_ARCHIVE_INTERVAL: z.coerce.number().int().min(1).max(86_400).default(3600),
  })
  .refine((c) => c.TESSERA_AUDIT_RETENTION >= c.TESSERA_HOT_RETENTION, {
    message: 'must be at least TESSERA_HOT_RETENTION (the archive keeps what leaves the hot log)',
    path: ['TESSERA_AUDIT_RETENTION'],
  })
  .refine((c) => c.TESSERA_PEER_REGIONS === undefined || (c.TESSERA_REGION !== undefined && c.TESSERA_PEER_SECRET !== undefined), {
    message: 'needs TESSERA_REGION and TESSERA_PEER_SECRET',
    path: ['TESSERA_PEER_REGIONS'],
  })
  .refine((c) => c.TESSERA_REGION === undefined || !Object.hasOwn(c.TESSERA_PEER_REGIONS ?? {}, c.TESSERA_REGION), {
    message: 'must not name this issuer\'s own region (TESSERA_REGION)',
    path: ['TESSERA_PEER_REGIONS'],
  })
  .refine((c) => c.TESSERA_MIRRORED_REGIONS === undefined || c.TESSERA_MIRRORED_REGIONS.length === 0 || c.TESSERA_KAFKA_BROKERS !== undefined, {
    message: 'needs TESSERA_KAFKA_BROKERS (mirrored topics are read from this region\'s Kafka)',
    path: ['TESSERA_MIRRORED_REGIONS'],
  })
  .refine((c) => c.TESSERA_REGION === undefined || !(c.TESSERA_MIRRORED_REGIONS ?? []).includes(c.TESSERA_REGION), {
    message: 'must not name this process\'s own region (TESSERA_REGION)',
    path: ['TESSERA_MIRRORED_REGIONS'],
  })
  .refine((c) => c.TESSERA_CONTROL_REGION === undefined || c.TESSERA_REGION !== undefined, {
    message: 'needs TESSERA_REGION',
    path: ['TESSERA_CONTROL_REGION'],
  })
  .refine((c) => c.TESSERA_BARE_FAMILY_REGION === undefined || c.TESSERA_REGION !== undefined, {
    message: 'needs TESSERA_REGION',
    path: ['TESSERA_BARE_FAMILY_REGION'],
  })
  .refine((c) => c.TESSERA_VERIFIER_SOURCE === 'log' || c.TESSERA_KAFKA_BROKERS !== undefined, {
    message: 'TESSERA_VERIFIER_SOURCE=kafka needs TESSERA_KAFKA_BROKERS',
    path: ['TESSERA_VERIFIER_SOURCE'],
  })
  .refine((c) => c.TESSERA_LEGACY_PORT === undefined || c.TESSERA_LEGACY_PORT === 0 || c.TESSERA_LEGACY_PORT !== c.TESSERA_PORT, {
    message: 'must differ from TESSERA_PORT (leave it unset to serve v1 on the same listener)',
    path: ['TESSERA_LEGACY_PORT'],
  })
  .refine((c) => c.TESSERA_ADMIN_PORT === 'off' || c.TESSERA_ADMIN_PORT === 0 || ![c.TESSERA_PORT, c.TESSERA_LEGACY_PORT].includes(c.TESSERA_ADMIN_PORT), {
    message: 'must differ from TESSERA_PORT and TESSERA_LEGACY_PORT (or be off)',
    path: ['TESSERA_ADMIN_PORT'],
  })
  .refine((c) => c.TESSERA_HEADERS_TIMEOUT <= c.TESSERA_REQUEST_TIMEOUT, {
    message: 'must not exceed TESSERA_REQUEST_TIMEOUT (the headers are part of the request)',
    path: ['TESSERA_HEADERS_TIMEOUT'],
  })
  .refine((c) => (c.TESSERA_TLS_CERT === undefined) === (c.TESSERA_TLS_KEY === undefined), {
    message: 'TESSERA_TLS_CERT and TESSERA_TLS_KEY go together: set both or neither',
    path: ['TESSERA_TLS_CERT'],
  })
  .superRefine(checkKafkaSecurity);

export type TesseraConfig = z.infer<typeof ConfigSchema>;

/** The processes Tessera runs: `tessera start` (the all-in-one), `issuer`, `verifier` and `relay`. */
export const roles = ['all-in-one', 'issuer', 'verifier', 'relay'] as const;
export type Role = (typeof roles)[number];

/**
 * What each role cannot run without, beyond what every process needs. Checked with the rest of
 * the configuration, so a role that lacks a setting refuses to start naming the variable. A
 * Kafka-fed verifier needs no JWKS URL: its keys can come from the topic.
 */
const roleRequirements: Readonly<Record<Role, readonly { readonly variable: keyof TesseraConfig; readonly message: string }[]>> = {
  'all-in-one': [],
  issuer: [],
  verifier: [],
  relay: [{ variable: 'TESSERA_KAFKA_BROKERS', message: 'the relay needs it: host:port[,host:port…]' }],
};

export class ConfigError extends CodedError {
  readonly code = 'ERR_CONFIG';
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * The regions whose mirrored topics this process follows: TESSERA_MIRRORED_REGIONS, else the
 * peers of TESSERA_PEER_REGIONS; none without Kafka (forwarding alone needs no mirror).
 */
export function mirroredRegionsOf(config: TesseraConfig): readonly string[] {
  if (config.TESSERA_KAFKA_BROKERS === undefined) return [];
  return config.TESSERA_MIRRORED_REGIONS ?? Object.keys(config.TESSERA_PEER_REGIONS ?? {});
}

/** The configuration from TESSERA_* variables; with a role, also what that role needs. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, options: { readonly role?: Role } = {}): TesseraConfig {
  // An empty variable means "not set", as shells and compose files often write it.
  const present = Object.fromEntries(Object.entries(env).filter(([key, value]) => key.startsWith('TESSERA_') && value !== ''));
  const requirements = options.role === undefined ? [] : roleRequirements[options.role];
  const schema = ConfigSchema.superRefine((config, context) => {
    for (const { variable, message } of requirements) if (config[variable] === undefined) context.addIssue({ code: 'custom', path: [variable], message });
  });
  const parsed = schema.safeParse(present);
  if (parsed.success) return parsed.data;
  // One line, so a supervisor's log shows the whole cause in the line it keeps.
  const causes = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'config'}: ${issue.message}`);
  throw new ConfigError(`invalid configuration: ${causes.join('; ')}`);
}

/** The archive folder: TESSERA_ARCHIVE_DIR, or `archive/` in the data folder. */
export function archiveDirOf(config: Pick<TesseraConfig, 'TESSERA_ARCHIVE_DIR' | 'TESSERA_DATA_DIR'>): string {
  return config.TESSERA_ARCHIVE_DIR ?? `${config.TESSERA_DATA_DIR.replace(/\/+$/, '')}/archive`;
}
