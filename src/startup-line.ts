// The one start-up line that says what is on: the version, Node's, the state directory, where the
// lists are, the feed, the admin API, Redis and the ARCEP data's date. It is built from the
// configuration's shape only and holds no secret: Redis is named by host and port (never its
// user, password or database), the feed and the admin API by on or off, never their password or
// token (startup-line.test.ts holds that).
import { listsLocationOf, stateDirOf, type Config } from './config/config.js';

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

/** Redis as `host:port`, from a redis:// or rediss:// URL: its credentials and database left out. */
export function redisHostOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port === '' ? '6379' : parsed.port}`;
  } catch {
    // The schema only checks the scheme: a URL that does not parse is named by that fact alone.
    return 'unparsable URL';
  }
}

const DATA_ORIGINS = { configured: 'ARCEP_DATA_DIR', updated: 'state directory (data update)', snapshot: 'shipped snapshot' } as const;

export function startupLineOf(config: Config, facts: StartupFacts): StartupLine {
  const location = listsLocationOf(config);
  const redis = location.redisUrl === undefined ? 'none' : redisHostOf(location.redisUrl);
  const lists = location.redisUrl === undefined ? `file ${location.listsFile}` : `Redis${location.listsFileSet === true ? `, mirrored to ${location.listsFile}` : ''}`;
  const admin =
    config.ADMIN_TOKEN === undefined ? 'off' : facts.adminPort === undefined ? 'on the API port' : `port ${facts.adminPort} on ${config.ADMIN_HOST}`;
  const feed = config.FEED_PASSWORD === undefined ? 'off' : 'on';
  const node = facts.nodeVersion ?? process.versions.node;
  const from = `${DATA_ORIGINS[facts.numberingData.origin]} ${facts.numberingData.dir}`;
  const fields = { version: facts.version, node, stateDir: stateDirOf(config), lists, feed, admin, redis, numberingData: { dataDate: facts.numberingData.dataDate, from } } as const;
  const message =
    `phone-reputation ${facts.version} on Node ${node}: state in ${fields.stateDir}, lists: ${lists}, feed ${feed}, ` +
    `admin API ${admin}, Redis ${redis}, ARCEP data of ${facts.numberingData.dataDate} (${from})`;
  return { fields, message };
}
