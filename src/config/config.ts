// The service's configuration: one schema, read once from the environment, frozen.
// A bad value stops the start with a message that names the variable and what it takes.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

const Url = Type.String({ pattern: '^https?://[^\\s/]+(/[^\\s]*)?$', description: 'http(s) base URL' });
const Port = Type.Integer({ minimum: 0, maximum: 65535 });
const PositiveInt = Type.Integer({ minimum: 1 });
const NonNegativeInt = Type.Integer({ minimum: 0 });

/** Every variable the service reads, with its default. The README table mirrors this list. */
export const ConfigSchema = Type.Object({
  PORT: Type.Optional(Port),
  HOST: Type.Optional(Type.String({ minLength: 1 })),
  LOG_LEVEL: Type.Optional(Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)))),
  RATE_LIMIT_MAX: Type.Optional(NonNegativeInt),
  RATE_LIMIT_WINDOW_S: Type.Optional(PositiveInt),
  TRUST_PROXY: Type.Optional(Type.String({ pattern: '^(off|false|0|[1-9][0-9]?|[0-9a-fA-F:./, ]+|loopback|linklocal|uniquelocal)$' })),
  DEFAULT_REGION: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
  SHUTDOWN_GRACE_MS: Type.Optional(PositiveInt),
  HASH_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  MAX_IN_FLIGHT: Type.Optional(PositiveInt),
  MAX_EVENT_LOOP_DELAY_MS: Type.Optional(NonNegativeInt),

  TELLOWS_API_URL: Type.Optional(Url),
  TELLOWS_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  TELLOWS_PARTNER: Type.Optional(Type.String({ minLength: 1 })),
  TELLOWS_WEB_URL: Type.Optional(Url),
  NUMEROINCONNU_URL: Type.Optional(Url),
  TELGUARDER_URL: Type.Optional(Url),
  TELLOWS_RPM: Type.Optional(PositiveInt),
  NUMEROINCONNU_RPM: Type.Optional(PositiveInt),
  TELGUARDER_RPM: Type.Optional(PositiveInt),
  UPSTREAM_CONCURRENCY: Type.Optional(PositiveInt),

  SOURCE_TIMEOUT_MS: Type.Optional(PositiveInt),
  LOOKUP_TIMEOUT_MS: Type.Optional(PositiveInt),
  CACHE_MAX_ENTRIES: Type.Optional(PositiveInt),
  CACHE_TTL_S: Type.Optional(PositiveInt),
  CACHE_NOT_FOUND_TTL_S: Type.Optional(PositiveInt),
  CACHE_STALE_S: Type.Optional(NonNegativeInt),

  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  REDIS_KEY_PREFIX: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  WORKERS: Type.Optional(Type.String({ pattern: '^(auto|[1-9][0-9]?)$' })),

  METRICS_ENABLED: Type.Optional(Type.Boolean()),
  METRICS_PORT: Type.Optional(Port),

  ARCEP_DATA_DIR: Type.Optional(Type.String({ minLength: 1 })),
  ARCEP_MAJNUM_URL: Type.Optional(Url),
  ARCEP_MAJRIO_URL: Type.Optional(Url),
  ARCEP_IDENTIFIANTS_URL: Type.Optional(Url),
});

export const CONFIG_DEFAULTS = {
  PORT: 3000,
  HOST: '0.0.0.0',
  LOG_LEVEL: 'info',
  RATE_LIMIT_MAX: 30,
  RATE_LIMIT_WINDOW_S: 60,
  TRUST_PROXY: 'off',
  DEFAULT_REGION: 'FR',
  SHUTDOWN_GRACE_MS: 10_000,
  MAX_IN_FLIGHT: 1000,
  MAX_EVENT_LOOP_DELAY_MS: 1000,
  TELLOWS_API_URL: 'https://www.tellows.de',
  TELLOWS_WEB_URL: 'https://www.tellows.fr',
  NUMEROINCONNU_URL: 'https://www.numeroinconnu.fr',
  TELGUARDER_URL: 'https://www.telguarder.com',
  TELLOWS_RPM: 120,
  NUMEROINCONNU_RPM: 30,
  TELGUARDER_RPM: 30,
  UPSTREAM_CONCURRENCY: 4,
  SOURCE_TIMEOUT_MS: 3000,
  LOOKUP_TIMEOUT_MS: 4000,
  CACHE_MAX_ENTRIES: 100_000,
  CACHE_TTL_S: 21_600,
  CACHE_NOT_FOUND_TTL_S: 3600,
  CACHE_STALE_S: 604_800,
  REDIS_KEY_PREFIX: 'phonerep:',
  WORKERS: '1',
  METRICS_ENABLED: true,
  ARCEP_DATA_DIR: 'data/arcep',
  ARCEP_MAJNUM_URL: 'https://www.arcep.fr/fileadmin/reprise/dossiers/numerotation/opendata/MAJNUM.csv',
  ARCEP_MAJRIO_URL: 'https://www.arcep.fr/fileadmin/reprise/dossiers/numerotation/opendata/MAJRIO.csv',
  ARCEP_IDENTIFIANTS_URL: 'https://www.data.gouv.fr/fr/datasets/r/identifiants_ce.csv',
} as const;

type RawConfig = Static<typeof ConfigSchema>;
type Defaulted = { [K in keyof typeof CONFIG_DEFAULTS]-?: NonNullable<RawConfig[K]> };
export type Config = Readonly<Omit<RawConfig, keyof Defaulted> & Defaulted>;

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
  if (Array.isArray(schema.anyOf)) return `one of ${(schema.anyOf as TSchema[]).map((s) => String(s.const)).join(', ')}`;
  if (typeof schema.pattern === 'string') return `a value matching ${schema.pattern}`;
  return 'a non-empty string';
}

/**
 * Reads the configuration from an environment map. Empty strings count as unset, so a
 * `.env` line `TELLOWS_API_KEY=` leaves the default. Throws ConfigError listing every bad variable.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const properties = ConfigSchema.properties as Record<string, TSchema>;
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
    problems.push(`${name}=${JSON.stringify(picked[name])} is not valid: expected ${describeSchema(schema)}`);
  }
  const merged = { ...CONFIG_DEFAULTS, ...converted } as Record<string, unknown>;
  if (merged.TRUST_PROXY === 'true') problems.push('TRUST_PROXY=true would trust any forged X-Forwarded-For: give a hop count or proxy addresses');
  if (typeof merged.REDIS_URL === 'string' && merged.HASH_SECRET === undefined) {
    problems.push('HASH_SECRET must be set (16+ characters, the same on every instance) when REDIS_URL is set, so that instances share cache keys');
  }
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n  - ${[...new Set(problems)].join('\n  - ')}`);
  }
  return Object.freeze(merged) as Config;
}

/**
 * TRUST_PROXY as Fastify's `trustProxy` option: false, a list of addresses/CIDRs, or for a hop
 * count a function trusting the nearest N hops (what proxy-addr does with a number).
 */
export function trustProxySetting(config: Pick<Config, 'TRUST_PROXY'>): false | string[] | ((address: string, hop: number) => boolean) {
  const value = config.TRUST_PROXY.trim();
  if (value === 'off' || value === 'false' || value === '0') return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    return (_address, hop) => hop < hops;
  }
  return value.split(',').map((part) => part.trim()).filter((part) => part.length > 0);
}
