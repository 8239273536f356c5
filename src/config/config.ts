// The service's configuration: one schema, read once from the environment, frozen.
// Each variable is one entry below (name, type, default, description); the defaults, the typed
// Config, docs/configuration.md and .env.example are all derived from it (`npm run docs:config`).
// A bad value stops the start with a message that names the variable and what it takes.
import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { CloneType, Type, type Static, type TOptional, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { DEFAULT_STATE_DIR, SHIPPED_ARCEP_DIR } from './package-info.js';

const Url = Type.String({ pattern: '^https?://[^\\s/]+(/[^\\s]*)?$' });
const Port = Type.Integer({ minimum: 0, maximum: 65535 });
const PositiveInt = Type.Integer({ minimum: 1 });
const NonNegativeInt = Type.Integer({ minimum: 0 });
const NonEmpty = Type.String({ minLength: 1 });
const Verdict = Type.Union([
  Type.Literal('block'),
  Type.Literal('warn'),
  Type.Literal('allow'),
  Type.Literal('unknown'),
]);

/** True for a time zone the platform knows (config/ imports no other folder, so not domain/legal-hours.ts's). */
function isKnownTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** A variable with a default: the schema carries it, so the Config type makes it always present. */
function setting<T extends TSchema>(
  schema: T,
  defaultValue: Static<T>,
  description: string,
): TOptional<T & { default: Static<T> }>;
/** A variable without a default: absent from Config when unset. */
function setting<T extends TSchema>(schema: T, defaultValue: undefined, description: string): TOptional<T>;
function setting(schema: TSchema, defaultValue: unknown, description: string): TSchema {
  return Type.Optional(
    CloneType(schema, defaultValue === undefined ? { description } : { description, default: defaultValue }),
  );
}

/** Every variable the service reads. To add one, add one entry (at the end when on a branch). */
export const ConfigSchema = Type.Object({
  PORT: setting(Port, 3000, 'HTTP port of the API and the page.'),
  HOST: setting(NonEmpty, '0.0.0.0', 'Listen address.'),
  LOG_LEVEL: setting(
    Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level))),
    'info',
    'Log level: fatal, error, warn, info, debug, trace or silent.',
  ),
  RATE_LIMIT_MAX: setting(
    NonNegativeInt,
    30,
    'Requests per client per window on /api/* and 404s; 0 turns limiting off.',
  ),
  RATE_LIMIT_WINDOW_S: setting(PositiveInt, 60, 'Window of the sliding rate limit, in seconds.'),
  TRUST_PROXY: setting(
    Type.String({ pattern: '^(off|false|0|[1-9][0-9]?|[0-9a-fA-F:./, ]+|loopback|linklocal|uniquelocal)$' }),
    'off',
    "Which proxies' X-Forwarded-For to believe: off, a hop count (1 = one proxy in front), or comma-separated proxy addresses/CIDRs (10.0.0.0/8, loopback). true is refused: it would let anyone forge their address.",
  ),
  DEFAULT_REGION: setting(
    Type.String({ pattern: '^[A-Z]{2}$' }),
    'FR',
    'Region (ISO 3166 alpha-2) for numbers without + or 00 that do not start with 0.',
  ),
  SHUTDOWN_GRACE_MS: setting(
    PositiveInt,
    10_000,
    'How long SIGTERM/SIGINT wait for in-flight requests before exiting anyway.',
  ),
  HASH_SECRET: setting(
    Type.String({ minLength: 16 }),
    undefined,
    'Key of the HMAC that hashes numbers (cache keys) and client addresses (rate-limit keys), 16+ characters. Random per process when unset; required, and the same on every instance, with REDIS_URL or REDIS_SENTINELS.',
  ),
  MAX_IN_FLIGHT: setting(PositiveInt, 1000, 'API requests in progress above which new ones get 503 with Retry-After.'),
  MAX_EVENT_LOOP_DELAY_MS: setting(
    NonNegativeInt,
    1000,
    'Mean event-loop delay, sustained over two 0.5 s intervals, above which API requests get 503; 0 = off.',
  ),

  TELLOWS_API_URL: setting(
    Url,
    'https://www.tellows.de',
    "Base URL of tellows' partner API (/basic/num/{n}); may point at a mirror or a proxy.",
  ),
  TELLOWS_API_KEY: setting(NonEmpty, undefined, "tellows partner API key; unset = tellows' HTML page only."),
  TELLOWS_PARTNER: setting(NonEmpty, undefined, 'Partner name sent with the tellows key, if the plan needs one.'),
  TELLOWS_WEB_URL: setting(Url, 'https://www.tellows.fr', "Base URL of tellows' site (/num/{n})."),
  NUMEROINCONNU_URL: setting(Url, 'https://www.numeroinconnu.fr', 'Base URL of numeroinconnu.fr (/numero/{n}).'),
  TELGUARDER_URL: setting(
    Url,
    'https://www.telguarder.com',
    'Base URL of telguarder (/fr/search or /fr/number/{n}, see TELGUARDER_LOOKUP).',
  ),
  TELLOWS_RPM: setting(
    PositiveInt,
    120,
    'Requests per minute to tellows (API and site each), for the whole deployment when Redis is shared.',
  ),
  NUMEROINCONNU_RPM: setting(PositiveInt, 30, 'Requests per minute to numeroinconnu.fr.'),
  TELGUARDER_RPM: setting(
    PositiveInt,
    30,
    'Requests per minute to telguarder; every request sent counts, so a search (TELGUARDER_LOOKUP=search: a POST and its redirected GET) costs 2.',
  ),
  UPSTREAM_CLIENT_SHARE_PCT: setting(
    Type.Integer({ minimum: 1, maximum: 100 }),
    50,
    "Most of each upstream's per-minute budget one API client may spend in any sliding minute, in percent (rounded down, at least 1 request); its lookups past that get blocked(budget) for that source while the others still have theirs. A client is its rate-limit bucket (address, or IPv6 /64); 100 = no per-client cap.",
  ),
  UPSTREAM_EXEMPT_SHARE_PCT: setting(
    Type.Integer({ minimum: 1, maximum: 100 }),
    80,
    'UPSTREAM_CLIENT_SHARE_PCT for the clients in RATE_LIMIT_EXEMPT (a PBX): their larger share of each upstream budget.',
  ),
  UPSTREAM_CONCURRENCY: setting(
    PositiveInt,
    4,
    'Requests in flight per upstream (numeroinconnu and telguarder are capped at 2 whatever this says).',
  ),

  SOURCE_TIMEOUT_MS: setting(PositiveInt, 3000, 'Deadline of one source, retry included.'),
  LOOKUP_TIMEOUT_MS: setting(PositiveInt, 4000, 'Deadline of a whole lookup.'),
  CACHE_MAX_ENTRIES: setting(
    PositiveInt,
    undefined,
    'Optional count cap of the in-process source cache, in per-source results (three per number), on top of CACHE_MAX_MB. Unset = no count cap.',
  ),
  CACHE_TTL_S: setting(PositiveInt, 21_600, 'Freshness of an ok result, in seconds (±10 % jitter).'),
  CACHE_NOT_FOUND_TTL_S: setting(PositiveInt, 3600, 'Freshness of a not_found result, in seconds (±10 % jitter).'),
  CACHE_STALE_S: setting(
    NonNegativeInt,
    604_800,
    'How long past freshness a result may still be served stale, in seconds; 0 = never.',
  ),

  REDIS_URL: setting(
    Type.String({ pattern: '^rediss?://' }),
    undefined,
    "redis://[user:password@]host:port[/db] or rediss://… (TLS): shares the cache, rate limit, coalescing and upstream politeness between instances, and holds the operator's lists (data of record: persist it). Unset = memory only, lists in LISTS_FILE. Through Sentinel: REDIS_SENTINELS instead (not both); the credentials may also be REDIS_USERNAME and REDIS_PASSWORD (not both ways).",
  ),
  REDIS_KEY_PREFIX: setting(
    Type.String({ minLength: 1, maxLength: 64 }),
    'phonerep:',
    'Prefix of every Redis key, so several deployments can share one Redis.',
  ),
  REDIS_COMMAND_TIMEOUT_MS: setting(
    Type.Integer({ minimum: 10, maximum: 10_000 }),
    250,
    'Deadline of one Redis command, past which that call uses the in-process fallback; replies slower than half of it, three in a row, send the instance to its fallbacks for at least 5 s. Raise it for a distant Redis.',
  ),
  WORKERS: setting(
    Type.String({ pattern: '^(auto|[1-9][0-9]?)$' }),
    '1',
    'Server processes on this machine sharing PORT: a number (1-99) or auto (one per core).',
  ),

  METRICS_ENABLED: setting(Type.Boolean(), true, 'Serve Prometheus metrics at /metrics.'),
  METRICS_PORT: setting(
    Port,
    undefined,
    'Serve /metrics on this port, on METRICS_HOST, instead of the API port, where /metrics then answers 404 (unset = on the API port).',
  ),

  ARCEP_DATA_DIR: setting(
    NonEmpty,
    undefined,
    'Where the ARCEP numbering files are read from and phone-rep data update writes them. Unset = STATE_DIR/arcep once data update has written there, else the snapshot shipped in the package (data/arcep, never written).',
  ),
  ARCEP_MAJNUM_URL: setting(
    Url,
    'https://extranet.arcep.fr/uploads/MAJNUM.csv',
    'Source of MAJNUM.csv for phone-rep data update.',
  ),
  ARCEP_MAJRIO_URL: setting(
    Url,
    'https://extranet.arcep.fr/uploads/MAJRIO.csv',
    'Source of MAJRIO.csv for phone-rep data update.',
  ),
  ARCEP_IDENTIFIANTS_URL: setting(
    Url,
    'https://extranet.arcep.fr/uploads/identifiants_CE.csv',
    'Source of the operator identifiers file for phone-rep data update.',
  ),

  TELGUARDER_LOOKUP: setting(
    Type.Union([Type.Literal('search'), Type.Literal('number')]),
    'search',
    'How the telguarder number page is reached: search (POST /fr/search with q=) or number (GET /fr/number/{0XXXXXXXXX}).',
  ),
  CANARY_INTERVAL_S: setting(
    NonNegativeInt,
    0,
    'Seconds between scheduled canary rounds inside the service (markers checked against the live sites, within each budget); 0 = off.',
  ),
  CANARY_NUMBERS: setting(
    Type.String({
      pattern:
        '^((tellows|numeroinconnu|telguarder):)?\\+?[0-9]{4,20}(,((tellows|numeroinconnu|telguarder):)?\\+?[0-9]{4,20})*$',
    }),
    undefined,
    'Numbers the canary checks: comma-separated [upstream:]number items; a bare number applies to every upstream without its own. Unset = 0639980000,0199000000.',
  ),
  MAX_CONNECTIONS: setting(
    PositiveInt,
    10_000,
    'Open connections per process; lowered at start to the file-descriptor limit minus 256. New connections past it are closed at once.',
  ),
  MAX_CONNECTIONS_PER_ADDRESS: setting(
    NonNegativeInt,
    512,
    'Open connections per client socket address, per process; 0 = no cap. Behind a reverse proxy every connection comes from the proxy: raise it or set 0 there.',
  ),
  HEADERS_TIMEOUT_MS: setting(
    PositiveInt,
    10_000,
    'A request whose headers have not all arrived within this is answered 408 and closed (checked every 0.5 s). At most REQUEST_TIMEOUT_MS.',
  ),
  REQUEST_TIMEOUT_MS: setting(
    PositiveInt,
    15_000,
    'A request that has not fully arrived within this is answered 408 and closed (checked every 0.5 s).',
  ),
  CACHE_MAX_MB: setting(
    PositiveInt,
    256,
    'Memory the in-process caches may take on this machine, in MiB, everything held per number charged (per-source results, finished answers with their compressed forms, spellings); with WORKERS=n each process gets 1/n. Least recently used dropped first; about 250 numbers per MiB with typical pages. Once quiet after a burst: RSS ≤ idle + 1.25 × this + 32 MiB; during a burst, plan with the measured peaks of the sizing table (docs/operations.md).',
  ),
  VERDICT_BLOCK_SCORE: setting(
    Type.Integer({ minimum: 1, maximum: 10 }),
    7,
    '`/verdict` answers block for a score (1-9) at or above this; 10 = never block on the score.',
  ),
  VERDICT_WARN_SCORE: setting(
    Type.Integer({ minimum: 1, maximum: 10 }),
    5,
    '`/verdict` answers warn for a score at or above this (and below VERDICT_BLOCK_SCORE); 10 = never warn on the score. At most VERDICT_BLOCK_SCORE.',
  ),
  VERDICT_NPV: setting(
    Verdict,
    'warn',
    '`/verdict` for a number in an NPV range (automated calls) whose score does not say block or warn: block, warn, allow or unknown.',
  ),
  VERDICT_WITHHELD: setting(
    Verdict,
    'allow',
    '`/verdict` for a withheld caller (anonymous, restricted, unknown, private…): block, warn, allow or unknown.',
  ),
  CID_MAX_LENGTH: setting(
    Type.Integer({ minimum: 8, maximum: 200 }),
    30,
    'Longest `/cid` line, in grapheme clusters (8-200); longer lines are cut, and never pass max(75, this) bytes.',
  ),
  RATE_LIMIT_EXEMPT: setting(
    Type.String({ pattern: '^[0-9a-fA-F:./, ]+$' }),
    undefined,
    'Client addresses and CIDR ranges (IPv4 and IPv6, comma-separated: 192.0.2.10, 10.0.0.0/8, 2001:db8::/32) the rate limit does not apply to, e.g. your PBX; they also get UPSTREAM_EXEMPT_SHARE_PCT of each upstream budget. The limit on failed credentials (admin token, feed password) still applies to them. An IPv6 range holding all of ::ffff:0:0/96 (::/0, ::/64) is refused: it would exempt every IPv4 client too. Unset = none.',
  ),
  PUBLIC_URL: setting(
    Type.String({ pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$' }),
    undefined,
    'Public base URL of this deployment (https://phones.example.org), written into the ready-to-import SpamBlocker configs. Unset = taken from X-Forwarded-Proto, X-Forwarded-Host and X-Forwarded-Port when TRUST_PROXY trusts the proxy, else from the Host header.',
  ),
  FEED_PASSWORD: setting(
    Type.String({ minLength: 8, maxLength: 200 }),
    undefined,
    'Turns the blocklist feed on (CardDAV at /carddav/, /feed/blocklist.vcf, /feed/blocklist.csv, /integrations/spamblocker/workflow.json), behind HTTP Basic with this password (8+ characters). Unset = the feed is off (404) and no looked-up number is recorded.',
  ),
  FEED_USER: setting(
    Type.String({ pattern: '^[^:\\s]{1,64}$' }),
    'blocklist',
    "User name of the blocklist feed's HTTP Basic (no colon, no space).",
  ),
  FEED_MAX_ENTRIES: setting(
    Type.Integer({ minimum: 1, maximum: 100_000 }),
    1000,
    'Most numbers and wildcards the blocklist feed holds (AVM recommends at most 1000 for a Fritz!Box phone book: a larger one fails without an error).',
  ),
  FEED_RETENTION_DAYS: setting(
    Type.Integer({ minimum: 1, maximum: 365 }),
    30,
    "How long a looked-up number whose verdict was block stays in the feed's record (kept in clear: personal data), in days.",
  ),
  LISTS_FILE: setting(
    NonEmpty,
    undefined,
    "The operator's allow and block lists (CSV, docs/lists.md), created on first write. Unset = STATE_DIR/lists.csv. With REDIS_URL the lists live in Redis; this file, when set, mirrors every change (written before the change is acknowledged) and fills Redis again when Redis lost the lists; unset, its default is only imported when Redis holds no lists.",
  ),
  ADMIN_TOKEN: setting(
    Type.String({ minLength: 32 }),
    undefined,
    'Bearer token of the admin API (/admin/lists/…), 32+ characters; unset = the admin API is off.',
  ),
  ADMIN_PORT: setting(
    Port,
    undefined,
    'Serve the admin API on this port, on ADMIN_HOST, instead of the API port, where /admin/… then answers 404 (unset = on the API port); needs ADMIN_TOKEN.',
  ),
  METRICS_HOST: setting(
    NonEmpty,
    '127.0.0.1',
    'Listen address of METRICS_PORT: loopback by default, so only this machine can scrape. A LAN address (or 0.0.0.0) for a scraper elsewhere: docs/operations.md, "Admin API and metrics from the LAN".',
  ),
  ADMIN_HOST: setting(
    NonEmpty,
    '127.0.0.1',
    'Listen address of ADMIN_PORT: loopback by default. A LAN address (or 0.0.0.0) to reach the admin API from the LAN; plain HTTP, so the token crosses the LAN in clear: docs/operations.md, "Admin API and metrics from the LAN".',
  ),
  FEED_RECORD_FROM: setting(
    Type.String({ pattern: '^([0-9a-fA-F:./, ]+|none)$' }),
    undefined,
    "Client addresses and CIDR ranges (as RATE_LIMIT_EXEMPT) whose lookups through the phone routes the blocklist feed records (its looked-up numbers whose verdict was block), or none. Unset = the RATE_LIMIT_EXEMPT clients (a PBX); neither set = nobody's. Anyone else's lookups are never recorded.",
  ),
  STATE_DIR: setting(
    Type.String({ pattern: '^/' }),
    undefined,
    "The one directory the service and phone-rep write (an absolute path): the ARCEP data data update fetches (arcep/) and the default lists file (lists.csv). Unset = `state` in the package's folder, the same for the server and the CLI whoever runs them; the systemd unit (examples/systemd) and the image use /var/lib/phone-reputation.",
  ),
  ARCEP_MAX_AGE_DAYS: setting(
    PositiveInt,
    120,
    'Age in days past which the ARCEP numbering data in use (its newest allocation date) makes /health/ready say degraded; phone-rep data update refreshes it.',
  ),
  REPORT_HALF_LIFE_DAYS: setting(
    Type.Integer({ minimum: 1, maximum: 3650 }),
    125,
    "Half-life of a reporter's vote, in days: each vote weighs 1 when cast and half as much every this many days (docs/reports.md, Evidence).",
  ),
  REPORT_MIN_REPORTERS: setting(
    PositiveInt,
    2,
    'Distinct reporters (tokens) a number needs before the reports can call it spam (or legitimate); 1 lets one reporter decide, for a single household.',
  ),
  REPORT_RETENTION_DAYS: setting(
    Type.Integer({ minimum: 1, maximum: 3650 }),
    180,
    "How long a reporter's vote is kept (in clear, with its number and comment: personal data), in days; then it no longer counts and is deleted from the store.",
  ),
  REPORT_MAX_PER_TOKEN_DAY: setting(
    PositiveInt,
    100,
    'Reports one token may send per UTC day (a replaced vote counts too); past it the report routes answer 429 with Retry-After until midnight UTC.',
  ),
  LEGAL_HOURS_TZ: setting(
    NonEmpty,
    'Europe/Paris',
    'Time zone (IANA name) in which the legal calling hours are read (Monday–Friday 10:00–13:00 and 14:00–20:00, not on French public holidays; docs/legal-hours.md). An overseas deployment sets its own, e.g. Indian/Reunion.',
  ),
  VERDICT_CALL_CENTRE: setting(
    Type.Union([Type.Literal('allow'), Type.Literal('warn'), Type.Literal('block')]),
    'warn',
    '`/verdict` for a number in a fixed or non-geographic block of a call-centre operator (data/fr-call-centre-operators.csv, docs/numbering.md): allow, warn or block. The lists and the reports come first.',
  ),
  VERDICT_OUTSIDE_HOURS: setting(
    Type.Union([Type.Literal('warn'), Type.Literal('block')]),
    'block',
    '`/verdict` floor for a caller in an NPV or call-centre range calling outside the legal hours (docs/legal-hours.md): warn or block.',
  ),
  REDIS_SENTINELS: setting(
    NonEmpty,
    undefined,
    'Redis through Sentinel, instead of REDIS_URL (setting both is refused): the sentinels as host:port,host:port,… ([v6]:port for IPv6). The service asks them for the primary named REDIS_SENTINEL_NAME, writes there, and follows every failover (docs/operations.md, "Redis: Sentinel, ACL and TLS").',
  ),
  REDIS_SENTINEL_NAME: setting(
    Type.String({ pattern: '^[^\\s,]+$' }),
    undefined,
    "The primary's name in the sentinels' configuration (`sentinel monitor <name> …`); required with REDIS_SENTINELS.",
  ),
  REDIS_SENTINEL_PASSWORD: setting(
    NonEmpty,
    undefined,
    "The sentinels' own password (their requirepass), when they have one; only with REDIS_SENTINELS.",
  ),
  REDIS_USERNAME: setting(
    Type.String({ pattern: '^[^\\s]+$' }),
    undefined,
    "Redis ACL user of every connection (Redis 6+); needs REDIS_PASSWORD. Unset = Redis' default user. Not in REDIS_URL as well.",
  ),
  REDIS_PASSWORD: setting(
    NonEmpty,
    undefined,
    "Password of every Redis connection (requirepass, or REDIS_USERNAME's ACL password), with REDIS_URL or REDIS_SENTINELS; not in REDIS_URL as well. A password Redis refuses stops the start.",
  ),
  REDIS_TLS_CA: setting(
    NonEmpty,
    undefined,
    "File of the PEM certificate(s) of the authority that signed Redis' certificate, read at start. TLS itself is rediss:// in REDIS_URL; with REDIS_SENTINELS, setting this turns TLS on for the sentinels and Redis alike. Unset = the system's authorities.",
  ),
});

/** Variables whose value is a secret: an error names them without showing the value. */
export const SECRET_VARIABLES: ReadonlySet<string> = new Set([
  'HASH_SECRET',
  'ADMIN_TOKEN',
  'TELLOWS_API_KEY',
  'FEED_PASSWORD',
  'REDIS_PASSWORD',
  'REDIS_SENTINEL_PASSWORD',
]);

/**
 * A value as an error message may show it: a secret variable's by its length only; any other
 * with a URL's user and password masked (`redis://:password@host` → `redis://***@host`), since
 * REDIS_URL and the upstream URLs may carry credentials.
 */
export function shownValue(name: string, value: unknown): string {
  if (SECRET_VARIABLES.has(name)) return `(${String(value).length} characters, not shown)`;
  if (typeof value !== 'string') return JSON.stringify(value);
  const at = value.lastIndexOf('@');
  if (at === -1) return JSON.stringify(value);
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(value)?.[0] ?? '';
  return JSON.stringify(`${scheme}***${value.slice(at)}`);
}

/** The state directory: STATE_DIR, else `state` in the package's folder (package-info.ts). */
export function stateDirOf(config: Pick<Config, 'STATE_DIR'>): string {
  return config.STATE_DIR ?? DEFAULT_STATE_DIR;
}

/**
 * Where the ARCEP numbering data may be: ARCEP_DATA_DIR when set (read and updated there), else
 * the copy `phone-rep data update` writes into the state directory, falling back to the snapshot
 * shipped in the package, which nothing writes (infra/arcep/load-numbering-plan.ts picks).
 */
export function arcepLocationOf(config: Pick<Config, 'STATE_DIR' | 'ARCEP_DATA_DIR'>): {
  configuredDir?: string;
  updatedDir: string;
  snapshotDir: string;
} {
  return {
    ...(config.ARCEP_DATA_DIR === undefined ? {} : { configuredDir: resolve(config.ARCEP_DATA_DIR) }),
    updatedDir: join(stateDirOf(config), 'arcep'),
    snapshotDir: SHIPPED_ARCEP_DIR,
  };
}

/** LISTS_FILE's default: `lists.csv` in the state directory, whoever runs the service or the CLI. */
export function defaultListsFile(stateDir: string): string {
  return join(stateDir, 'lists.csv');
}

type Properties = (typeof ConfigSchema)['properties'];
type DefaultedName = {
  [K in keyof Properties]: Properties[K] extends { default: unknown } ? K : never;
}[keyof Properties];
type RawConfig = Static<typeof ConfigSchema>;
type EnvConfig = Omit<RawConfig, DefaultedName> & { [K in DefaultedName]-?: NonNullable<RawConfig[K]> };

/** Fastify's `trustProxy`: off, the proxy addresses/CIDRs to trust, or how many nearest hops. */
export type TrustProxy = false | string[] | number;

/**
 * The environment, defaulted and converted. WORKERS and TRUST_PROXY are only present parsed, as
 * `workers` and `trustProxy`, so that no caller reads the raw text again.
 */
export type Config = Readonly<
  Omit<EnvConfig, 'WORKERS' | 'TRUST_PROXY'> & {
    /** Server processes to run (WORKERS, with `auto` resolved to the core count). */
    workers: number;
    trustProxy: TrustProxy;
  }
>;

/** Name, default (when it has one) and description of every variable, in schema order. */
export interface VariableDoc {
  name: string;
  defaultValue: string | undefined;
  description: string;
  /** What a valid value looks like, as shown in error messages. */
  accepts: string;
}

function schemaProperties(): Record<string, TSchema> {
  return ConfigSchema.properties;
}

/** The defaults, read from the schema. */
export const CONFIG_DEFAULTS = Object.freeze(
  Object.fromEntries(
    Object.entries(schemaProperties()).flatMap(([name, schema]) =>
      schema.default === undefined ? [] : [[name, schema.default as unknown]],
    ),
  ),
) as { readonly [K in DefaultedName]: NonNullable<RawConfig[K]> };

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function describeSchema(schema: TSchema): string {
  if (schema.type === 'integer') {
    const min = schema.minimum as number | undefined;
    const max = schema.maximum as number | undefined;
    return `a whole number${min !== undefined ? ` ≥ ${min}` : ''}${max !== undefined ? ` and ≤ ${max}` : ''}`;
  }
  if (schema.type === 'boolean') return 'true or false';
  if (Array.isArray(schema.anyOf))
    return `one of ${(schema.anyOf as TSchema[]).map((s) => String(s.const)).join(', ')}`;
  if (typeof schema.pattern === 'string') return `a value matching ${schema.pattern}`;
  if (typeof schema.minLength === 'number' && typeof schema.maxLength === 'number')
    return `a string of ${schema.minLength} to ${schema.maxLength} characters`;
  if (typeof schema.minLength === 'number' && schema.minLength > 1)
    return `a string of ${schema.minLength}+ characters`;
  return 'a non-empty string';
}

export function configVariables(): VariableDoc[] {
  return Object.entries(schemaProperties()).map(([name, schema]) => ({
    name,
    defaultValue: schema.default === undefined ? undefined : String(schema.default),
    description: typeof schema.description === 'string' ? schema.description : '',
    accepts: describeSchema(schema),
  }));
}

/** WORKERS as a count: `auto` is one per core; the schema guarantees 1..99 otherwise. */
export function parseWorkers(setting: string, cores: number = availableParallelism()): number {
  if (setting === 'auto') return Math.max(1, cores);
  const count = Number(setting);
  return Number.isInteger(count) && count >= 1 ? count : 1;
}

/** TRUST_PROXY as Fastify reads it: false, a hop count, or a list of addresses/CIDRs. */
export function parseTrustProxy(setting: string): TrustProxy {
  const value = setting.trim();
  if (value === 'off' || value === 'false' || value === '0') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
}

/**
 * `trustProxy` as Fastify's option. Fastify reads a bare number as "trust nothing" (it cannot
 * check the nearest peer), so a hop count becomes a function trusting the nearest N hops, which
 * is what proxy-addr does with a count.
 */
export function fastifyTrustProxy(trust: TrustProxy): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust !== 'number') return trust;
  return (_address, hop) => hop < trust;
}

/**
 * RATE_LIMIT_EXEMPT read: the addresses and ranges as a BlockList, the items that are neither,
 * and the IPv6 ranges that hold the whole IPv4-mapped space (::ffff:0:0/96, so ::/0 or ::/64):
 * Node's BlockList applies those to every IPv4 client too, so they are refused at load.
 */
export function parseAddressRanges(setting: string): { list: BlockList; invalid: string[]; everyIPv4: string[] } {
  const list = new BlockList();
  const invalid: string[] = [];
  const everyIPv4: string[] = [];
  for (const item of setting
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)) {
    const [address = '', prefix, extra] = item.split('/');
    const family = isIP(address);
    const bits = prefix === undefined ? undefined : /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN;
    if (
      family === 0 ||
      extra !== undefined ||
      (bits !== undefined && !(bits >= 0 && bits <= (family === 4 ? 32 : 128)))
    ) {
      invalid.push(item);
      continue;
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, bits, type);
    if (type === 'ipv6' && bits !== undefined) {
      const alone = new BlockList();
      alone.addSubnet(address, bits, 'ipv6');
      // A range is contiguous: holding the first and the last IPv4 address, it holds them all.
      if (alone.check('0.0.0.0', 'ipv4') && alone.check('255.255.255.255', 'ipv4')) everyIPv4.push(item);
    }
  }
  return { list, invalid, everyIPv4 };
}

/**
 * Reads the configuration from an environment map. Empty strings count as unset, so a
 * `.env` line `TELLOWS_API_KEY=` leaves the default. Throws ConfigError listing every bad variable.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const properties = schemaProperties();
  const picked: Record<string, unknown> = {};
  for (const name of Object.keys(properties)) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') picked[name] = value.trim();
  }
  const converted = Value.Convert(ConfigSchema, picked) as Record<string, unknown>;
  const problems: string[] = [];
  for (const error of Value.Errors(ConfigSchema, converted)) {
    const name = error.path.replace(/^\//, '');
    const schema = properties[name];
    if (!schema) continue;
    problems.push(`${name}=${shownValue(name, picked[name])} is not valid: expected ${describeSchema(schema)}`);
  }
  const merged = { ...CONFIG_DEFAULTS, ...converted } as Record<string, unknown>;
  if (merged.TRUST_PROXY === 'true')
    problems.push('TRUST_PROXY=true would trust any forged X-Forwarded-For: give a hop count or proxy addresses');
  if (
    (typeof merged.REDIS_URL === 'string' || typeof merged.REDIS_SENTINELS === 'string') &&
    merged.HASH_SECRET === undefined
  ) {
    problems.push(
      `HASH_SECRET must be set (16+ characters, the same on every instance) when ${typeof merged.REDIS_URL === 'string' ? 'REDIS_URL' : 'REDIS_SENTINELS'} is set, so that instances share cache keys`,
    );
  }
  if (Number(merged.HEADERS_TIMEOUT_MS) > Number(merged.REQUEST_TIMEOUT_MS)) {
    problems.push('HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS (the headers are part of the request)');
  }
  if (Number(merged.VERDICT_WARN_SCORE) > Number(merged.VERDICT_BLOCK_SCORE)) {
    problems.push('VERDICT_WARN_SCORE must not exceed VERDICT_BLOCK_SCORE (a score that blocks also warns)');
  }
  if (typeof merged.RATE_LIMIT_EXEMPT === 'string') {
    const { invalid, everyIPv4 } = parseAddressRanges(merged.RATE_LIMIT_EXEMPT);
    if (invalid.length > 0) {
      problems.push(
        `RATE_LIMIT_EXEMPT has items that are neither an IP address nor a CIDR range (address/prefix): ${invalid.map((item) => JSON.stringify(item)).join(', ')}`,
      );
    }
    if (everyIPv4.length > 0) {
      problems.push(
        `RATE_LIMIT_EXEMPT has IPv6 ranges that hold every IPv4-mapped address (::ffff:0:0/96), so they would exempt every IPv4 client too: ${everyIPv4.map((item) => JSON.stringify(item)).join(', ')}; list IPv4 clients as IPv4 (0.0.0.0/0 if you really mean all of them) and IPv6 ones by a narrower range`,
      );
    }
  }
  if (typeof merged.FEED_RECORD_FROM === 'string' && merged.FEED_RECORD_FROM !== 'none') {
    const { invalid, everyIPv4 } = parseAddressRanges(merged.FEED_RECORD_FROM);
    if (invalid.length > 0)
      problems.push(
        `FEED_RECORD_FROM has items that are neither an IP address nor a CIDR range (address/prefix): ${invalid.map((item) => JSON.stringify(item)).join(', ')}`,
      );
    if (everyIPv4.length > 0)
      problems.push(
        `FEED_RECORD_FROM has IPv6 ranges that hold every IPv4-mapped address (::ffff:0:0/96), so they would count every IPv4 client too: ${everyIPv4.map((item) => JSON.stringify(item)).join(', ')}`,
      );
  }
  if (typeof merged.LEGAL_HOURS_TZ === 'string' && !isKnownTimeZone(merged.LEGAL_HOURS_TZ))
    problems.push(
      `LEGAL_HOURS_TZ=${shownValue('LEGAL_HOURS_TZ', merged.LEGAL_HOURS_TZ)} is not a time zone this platform knows: give an IANA name such as Europe/Paris or Indian/Reunion`,
    );
  problems.push(...redisProblems(merged));
  if (merged.ADMIN_PORT !== undefined && merged.ADMIN_TOKEN === undefined)
    problems.push('ADMIN_PORT is set but ADMIN_TOKEN is not: the admin API is off without ADMIN_TOKEN');
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n  - ${[...new Set(problems)].join('\n  - ')}`);
  }
  const { WORKERS, TRUST_PROXY, ...rest } = merged;
  return Object.freeze({
    ...rest,
    workers: parseWorkers(String(WORKERS)),
    trustProxy: parseTrustProxy(String(TRUST_PROXY)),
  }) as Config;
}

/** One sentinel of REDIS_SENTINELS. */
export interface HostPort {
  host: string;
  port: number;
}

/**
 * REDIS_SENTINELS read: `host:port` items (an IPv6 address in brackets, `[::1]:26379`), comma
 * separated; the items that are not, kept as written for the message.
 */
export function parseHostPorts(setting: string): { hosts: HostPort[]; invalid: string[] } {
  const hosts: HostPort[] = [];
  const invalid: string[] = [];
  for (const item of setting
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)) {
    const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)):(\d{1,5})$/.exec(item);
    const host = match?.[1] ?? match?.[2];
    const port = Number(match?.[3]);
    if (host === undefined || !(port >= 1 && port <= 65535) || (match?.[1] !== undefined && isIP(host) !== 6)) {
      invalid.push(item);
      continue;
    }
    hosts.push({ host, port });
  }
  return { hosts, invalid };
}

/** Whether a redis:// URL carries a user or a password of its own. */
function urlCredentials(url: string): { username: boolean; password: boolean } | undefined {
  try {
    const parsed = new URL(url);
    return { username: parsed.username !== '', password: parsed.password !== '' };
  } catch {
    return undefined;
  }
}

/** What REDIS_TLS_CA holds, or why it cannot be used. */
function readTlsCa(path: string): { pem: string } | { problem: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    return { problem: `REDIS_TLS_CA=${JSON.stringify(path)} cannot be read (${code}): give the path of a PEM file` };
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----'))
    return { problem: `REDIS_TLS_CA=${JSON.stringify(path)} holds no PEM certificate (-----BEGIN CERTIFICATE-----)` };
  return { pem: text };
}

/** The combinations of the Redis variables that cannot work, each naming its variables. */
function redisProblems(merged: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const text = (name: string): string | undefined => {
    const value = merged[name];
    return typeof value === 'string' ? value : undefined;
  };
  const url = text('REDIS_URL');
  const sentinels = text('REDIS_SENTINELS');
  const redisSet = url !== undefined || sentinels !== undefined;
  if (url !== undefined && sentinels !== undefined)
    problems.push(
      'REDIS_URL and REDIS_SENTINELS are both set: give one (REDIS_URL names one Redis; REDIS_SENTINELS finds the primary through the sentinels, with REDIS_PASSWORD, REDIS_USERNAME and REDIS_TLS_CA for the rest)',
    );
  if (sentinels !== undefined) {
    const { hosts, invalid } = parseHostPorts(sentinels);
    if (invalid.length > 0)
      problems.push(
        `REDIS_SENTINELS has items that are not host:port (port 1-65535, an IPv6 address in brackets): ${invalid.map((item) => JSON.stringify(item)).join(', ')}`,
      );
    else if (hosts.length === 0) problems.push('REDIS_SENTINELS names no sentinel: give host:port,host:port,…');
    if (text('REDIS_SENTINEL_NAME') === undefined)
      problems.push(
        "REDIS_SENTINELS is set but REDIS_SENTINEL_NAME is not: give the primary's name the sentinels monitor (sentinel monitor <name> …)",
      );
  } else {
    for (const name of ['REDIS_SENTINEL_NAME', 'REDIS_SENTINEL_PASSWORD'])
      if (text(name) !== undefined)
        problems.push(`${name} is set but REDIS_SENTINELS is not: it only applies to sentinels`);
  }
  for (const name of ['REDIS_PASSWORD', 'REDIS_USERNAME', 'REDIS_TLS_CA'])
    if (text(name) !== undefined && !redisSet)
      problems.push(`${name} is set but neither REDIS_URL nor REDIS_SENTINELS is: there is no Redis to use it for`);
  if (text('REDIS_USERNAME') !== undefined && text('REDIS_PASSWORD') === undefined)
    problems.push('REDIS_USERNAME is set but REDIS_PASSWORD is not: an ACL user logs in with its password');
  if (url !== undefined && /^rediss?:\/\//.test(url)) {
    const inUrl = urlCredentials(url);
    if (inUrl === undefined)
      problems.push(
        `REDIS_URL=${shownValue('REDIS_URL', url)} is not a URL: expected redis://[user:password@]host:port[/db]`,
      );
    else {
      if (inUrl.password && text('REDIS_PASSWORD') !== undefined)
        problems.push('REDIS_URL holds a password and REDIS_PASSWORD is set too: give the password once');
      if (inUrl.username && text('REDIS_USERNAME') !== undefined)
        problems.push('REDIS_URL holds a user and REDIS_USERNAME is set too: give the user once');
    }
    if (text('REDIS_TLS_CA') !== undefined && !url.startsWith('rediss://'))
      problems.push('REDIS_TLS_CA is set but REDIS_URL is redis:// (no TLS): write rediss:// for TLS');
  }
  const ca = text('REDIS_TLS_CA');
  if (ca !== undefined && redisSet) {
    const read = readTlsCa(ca);
    if ('problem' in read) problems.push(read.problem);
  }
  return problems;
}

/**
 * How every Redis connection of the service is made (REDIS_URL, or REDIS_SENTINELS and
 * REDIS_SENTINEL_NAME, with the credentials and TLS), or undefined without Redis. The same shape
 * as infra/redis/redis-connection.ts's RedisConnection, which the connections take (config/ may
 * not import infra/: the composition root hands one to the other). Reads REDIS_TLS_CA's file.
 */
export interface RedisConnectionSettings {
  url?: string;
  sentinels?: HostPort[];
  sentinelName?: string;
  sentinelPassword?: string;
  username?: string;
  password?: string;
  /** TLS: rediss:// in REDIS_URL, or REDIS_TLS_CA with REDIS_SENTINELS; `ca` is REDIS_TLS_CA's PEM text. */
  tls?: { ca?: string };
}

export function redisConnectionOf(
  config: Pick<
    Config,
    | 'REDIS_URL'
    | 'REDIS_SENTINELS'
    | 'REDIS_SENTINEL_NAME'
    | 'REDIS_SENTINEL_PASSWORD'
    | 'REDIS_USERNAME'
    | 'REDIS_PASSWORD'
    | 'REDIS_TLS_CA'
  >,
): RedisConnectionSettings | undefined {
  if (config.REDIS_URL === undefined && config.REDIS_SENTINELS === undefined) return undefined;
  let ca: string | undefined;
  if (config.REDIS_TLS_CA !== undefined) {
    const read = readTlsCa(config.REDIS_TLS_CA);
    if ('problem' in read) throw new ConfigError(`Invalid configuration:\n  - ${read.problem}`);
    ca = read.pem;
  }
  const tlsOn = config.REDIS_URL === undefined ? ca !== undefined : config.REDIS_URL.startsWith('rediss://');
  const auth = {
    ...(config.REDIS_USERNAME === undefined ? {} : { username: config.REDIS_USERNAME }),
    ...(config.REDIS_PASSWORD === undefined ? {} : { password: config.REDIS_PASSWORD }),
    ...(tlsOn ? { tls: ca === undefined ? {} : { ca } } : {}),
  };
  if (config.REDIS_URL !== undefined) return { url: config.REDIS_URL, ...auth };
  return {
    sentinels: parseHostPorts(config.REDIS_SENTINELS ?? '').hosts,
    sentinelName: config.REDIS_SENTINEL_NAME ?? '',
    ...(config.REDIS_SENTINEL_PASSWORD === undefined ? {} : { sentinelPassword: config.REDIS_SENTINEL_PASSWORD }),
    ...auth,
  };
}

/** Where the operator's lists are: LISTS_FILE (or its default) and, with REDIS_URL or REDIS_SENTINELS, Redis. */
export function listsLocationOf(config: Config): {
  listsFile: string;
  listsFileSet: boolean;
  redis?: RedisConnectionSettings;
  redisKeyPrefix: string;
  redisCommandTimeoutMs: number;
} {
  const redis = redisConnectionOf(config);
  return {
    listsFile: config.LISTS_FILE ?? defaultListsFile(stateDirOf(config)),
    listsFileSet: config.LISTS_FILE !== undefined,
    ...(redis === undefined ? {} : { redis }),
    redisKeyPrefix: config.REDIS_KEY_PREFIX,
    redisCommandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
  };
}
