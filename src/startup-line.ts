// The one start-up line that says what is on: the version, Node's, the state directory, where the
// lists are, the feed, the admin API, Redis and the ARCEP data's date. It is built from the
// configuration's shape only and holds no secret: Redis is named by host and port, or by its
// sentinels and primary's name (never its user, password or database), the feed and the admin API by on or off, never their password or
// token (startup-line.test.ts holds that).
import { existsSync } from 'node:fs';
import { listsLocationOf, stateDirOf, type Config } from './config/config.js';
import { describeRedisConnection } from './infra/redis/redis-connection.js';

export interface StartupFacts {
  version: string;
  /** The ARCEP data in use: its newest allocation date and where it was read from. */
  numberingData: { dataDate: string; origin: 'configured' | 'updated' | 'snapshot'; dir: string };
  /** The admin API's own port once listening (ADMIN_PORT), if any. */
  adminPort?: number;
  nodeVersion?: string;
}

export interface StartupLine {
  fields: {
    version: string;
    node: string;
    stateDir: string;
    lists: string;
    feed: 'on' | 'off';
    admin: string;
    redis: string;
    numberingData: { dataDate: string; from: string };
  };
  message: string;
}

/** Redis as `host:port` (and ` (TLS)` for rediss://), from a URL: its credentials and database left out. */
export function redisHostOf(url: string): string {
  return describeRedisConnection({ url, ...(url.startsWith('rediss://') ? { tls: {} } : {}) });
}

const DATA_ORIGINS = {
  configured: 'ARCEP_DATA_DIR',
  updated: 'state directory (data update)',
  snapshot: 'shipped snapshot',
} as const;

export function startupLineOf(config: Config, facts: StartupFacts): StartupLine {
  const location = listsLocationOf(config);
  const redis = location.redis === undefined ? 'none' : describeRedisConnection(location.redis);
  const mirror = location.listsFileSet === true ? `, mirrored to ${location.listsFile}` : '';
  const lists = location.redis === undefined ? `file ${location.listsFile}` : `Redis${mirror}`;
  const adminOn = facts.adminPort === undefined ? 'on the API port' : `port ${facts.adminPort} on ${config.ADMIN_HOST}`;
  const admin = config.ADMIN_TOKEN === undefined ? 'off' : adminOn;
  const feed = config.FEED_PASSWORD === undefined ? 'off' : 'on';
  const node = facts.nodeVersion ?? process.versions.node;
  const from = `${DATA_ORIGINS[facts.numberingData.origin]} ${facts.numberingData.dir}`;
  const numberingData = { dataDate: facts.numberingData.dataDate, from };
  const fields = {
    version: facts.version,
    node,
    stateDir: stateDirOf(config),
    lists,
    feed,
    admin,
    redis,
    numberingData,
  } as const;
  const message =
    `phone-reputation ${facts.version} on Node ${node}: state in ${fields.stateDir}, lists: ${lists}, feed ${feed}, ` +
    `admin API ${admin}, Redis ${redis}, ARCEP data of ${facts.numberingData.dataDate} (${from})`;
  return { fields, message };
}

/**
 * Where LISTS_FILE's default was before STATE_DIR: the XDG state directory of the user running
 * the service, or /var/lib/phone-reputation for root.
 */
export function formerDefaultListsFiles(env: Record<string, string | undefined>, uid: number | undefined): string[] {
  const xdg = env.XDG_STATE_HOME;
  return [
    ...(xdg !== undefined && xdg.startsWith('/') ? [`${xdg}/phone-reputation/lists.csv`] : []),
    ...(uid === 0 ? ['/var/lib/phone-reputation/lists.csv'] : []),
    ...(env.HOME === undefined ? [] : [`${env.HOME}/.local/state/phone-reputation/lists.csv`]),
  ];
}

/**
 * A lists file left at a former default while the default now in use holds none: the operator's
 * rules would silently stop applying after an upgrade, so the start says where they are.
 */
export function formerListsFileWarning(
  config: Config,
  options: {
    env?: Record<string, string | undefined>;
    uid?: number | undefined;
    exists?: (path: string) => boolean;
  } = {},
): string | undefined {
  const location = listsLocationOf(config);
  if (location.listsFileSet || location.redis !== undefined) return undefined;
  const exists = options.exists ?? existsSync;
  if (exists(location.listsFile)) return undefined;
  const uid = 'uid' in options ? options.uid : process.getuid?.();
  const former = formerDefaultListsFiles(options.env ?? process.env, uid).find(
    (path) => path !== location.listsFile && exists(path),
  );
  if (former === undefined) return undefined;
  return (
    `a lists file is at ${former}, the default before STATE_DIR, and none at ${location.listsFile}, the default now: ` +
    `its rules do not apply. Move it there (mv ${former} ${location.listsFile}) or set LISTS_FILE=${former}`
  );
}
