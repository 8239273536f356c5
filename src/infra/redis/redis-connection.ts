// How every Redis connection of an instance is made: one description (one Redis by URL, or the
// primary the sentinels name), its credentials and TLS, turned into ioredis' options here and
// only here. The shared client (redis-client.ts) is built from it, the CLI's own client too, and
// every second connection (the change-stream readers, the tokens' subscriber) is a `duplicate()`
// of the shared one, which carries the same options: so they all find the same primary, log in
// the same way and follow the same failover.
//
// Through Sentinel the connection asks the sentinels for the primary (`role: 'master'`: writes go
// there), and ioredis' failover detector subscribes to the sentinels' `+switch-master`, so a
// failover moves the connection at once instead of after a timeout. A `READONLY` reply (a primary
// demoted under a connection that has not moved yet) reconnects and sends the command again.
import type { ConnectionOptions } from 'node:tls';
import type { RedisOptions } from 'ioredis';

export interface RedisConnection {
  /** REDIS_URL (redis:// or rediss://); absent through Sentinel. */
  url?: string;
  /** REDIS_SENTINELS, with `sentinelName`: the sentinels that name the primary. */
  sentinels?: ReadonlyArray<{ host: string; port: number }>;
  sentinelName?: string;
  sentinelPassword?: string;
  /** REDIS_USERNAME (an ACL user) and REDIS_PASSWORD. */
  username?: string;
  password?: string;
  /** TLS on (rediss://, or REDIS_TLS_CA through Sentinel); `ca`: the PEM text of REDIS_TLS_CA. */
  tls?: { ca?: string };
}

/** A URL alone (the tests' and the former callers' way) or the whole description. */
export type RedisConnectionLike = RedisConnection | string;

export function redisConnection(like: RedisConnectionLike): RedisConnection {
  return typeof like === 'string' ? { url: like } : like;
}

/** Reconnect (and resend) on READONLY: the node this connection holds is a replica now. */
export function reconnectOnReadOnly(error: Error): false | 2 {
  return error.message.startsWith('READONLY') ? 2 : false;
}

/**
 * ioredis' options for the connection (merged over `base`, the client's timeouts and behaviour),
 * and the URL to give beside them, if any. A URL's own user and password are ioredis' to read;
 * config.ts refuses them beside REDIS_USERNAME and REDIS_PASSWORD.
 */
export function redisOptionsOf(
  like: RedisConnectionLike,
  base: RedisOptions = {},
): { url: string | undefined; options: RedisOptions } {
  const connection = redisConnection(like);
  const tls: ConnectionOptions | undefined =
    connection.tls === undefined ? undefined : connection.tls.ca === undefined ? {} : { ca: connection.tls.ca };
  const options: RedisOptions = {
    ...base,
    ...(connection.username === undefined ? {} : { username: connection.username }),
    ...(connection.password === undefined ? {} : { password: connection.password }),
    ...(tls === undefined ? {} : { tls }),
    reconnectOnError: reconnectOnReadOnly,
  };
  if (connection.sentinels !== undefined) {
    Object.assign(options, {
      sentinels: connection.sentinels.map(({ host, port }) => ({ host, port })),
      name: connection.sentinelName,
      role: 'master',
      failoverDetector: true,
      // The sentinels' answers are bounded like a connection's first reply.
      sentinelCommandTimeout: Math.max(base.connectTimeout ?? 0, 1000),
      ...(connection.sentinelPassword === undefined ? {} : { sentinelPassword: connection.sentinelPassword }),
      ...(tls === undefined ? {} : { enableTLSForSentinelMode: true, sentinelTLS: tls }),
    } satisfies RedisOptions);
  }
  return { url: connection.url, options };
}

/** Redis as the logs and the start-up line name it: host:port or the sentinels, never a credential. */
export function describeRedisConnection(like: RedisConnectionLike): string {
  const connection = redisConnection(like);
  const tls = connection.tls === undefined ? '' : ' (TLS)';
  if (connection.sentinels !== undefined) {
    const hosts = connection.sentinels
      .map(({ host, port }) => `${host.includes(':') ? `[${host}]` : host}:${port}`)
      .join(',');
    return `primary ${connection.sentinelName ?? '?'} through sentinels ${hosts}${tls}`;
  }
  try {
    const parsed = new URL(connection.url ?? '');
    return `${parsed.hostname}:${parsed.port === '' ? '6379' : parsed.port}${tls}`;
  } catch {
    // The schema only checks the scheme: a URL that does not parse is named by that fact alone.
    return 'unparsable URL';
  }
}

/** Node's codes of a TLS certificate it does not trust (the authority unknown, the name wrong, expired). */
const CERTIFICATE_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * Whether an error of a connection is one that waiting will not cure: Redis (or a sentinel)
 * refused the credentials (WRONGPASS; NOAUTH: none given to a Redis that needs one; a sentinel's
 * refusal seen through "All sentinels are unreachable … Last error: …"), or Redis' TLS
 * certificate is not trusted. Undefined for anything else (Redis away, slow, restarting).
 */
export function refusalOf(error: unknown): 'credentials' | 'certificate' | undefined {
  const message = error instanceof Error ? error.message : String(error);
  if (/\b(WRONGPASS|NOAUTH)\b|invalid password|invalid username-password/.test(message)) return 'credentials';
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && CERTIFICATE_CODES.has(code)) return 'certificate';
  return undefined;
}

/** What a refusal asks to check, by the variables' names (the CLI's words; the service's are composition.ts's). */
export function refusalAdvice(refused: 'credentials' | 'certificate', error: Error): string {
  const said = error.message.replace(/\s+/g, ' ').slice(0, 200);
  if (refused === 'certificate') return `Redis' TLS certificate is not trusted: check REDIS_TLS_CA (${said})`;
  if (/All sentinels are unreachable/.test(error.message))
    return `the sentinels refused the login: check REDIS_SENTINEL_PASSWORD (${said})`;
  return `Redis refused the login: check REDIS_PASSWORD and REDIS_USERNAME, or the user and password in REDIS_URL (${said})`;
}
