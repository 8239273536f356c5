// Every Redis key the service uses, named here and only here, by group. A group is the keys that
// one script, one MULTI or one multi-key command (MGET) uses together: each such group carries one
// hash tag (`{lists}`, `{reports}`, `{polite:<upstream>}`…) at the start of every key, so a Redis
// Cluster puts the whole group in one hash slot and accepts the command. The connection's key
// prefix (REDIS_KEY_PREFIX, ioredis' keyPrefix) is prepended to every key; the tag comes after it,
// so a key's slot depends on its tag alone. Keys always used one at a time (a cache entry, a lock,
// a client's rate-limit log) carry no tag, so a cluster spreads them over its slots.
//
// `keys.test.ts` computes the slot of every key of every group, prefix applied, and fails on a
// group whose keys disagree, or on a new group without a tag that is not listed there as used
// alone. The layout before the tags (layout 1) and its move to these names are redis-key-migration.ts's.
// docs/operations.md#redis-keys says the same for operators.

/** A key or a family of keys: a name, or a builder of names from their variable parts. */
export type KeyBuilder = string | ((...parts: string[]) => string);

export interface KeyGroup {
  /**
   * The hash tag every key of the group starts with, braces included: one for the group, or one
   * per value of every builder's first part (an upstream); null: each key is used alone.
   */
  readonly tag: string | ((first: string) => string) | null;
  /** What uses the keys together (or alone): said in the docs and the test's messages. */
  readonly usedBy: string;
  readonly keys: Readonly<Record<string, KeyBuilder>>;
}

const LISTS = '{lists}';
const REPORTS = '{reports}';
const TOKENS = '{tokens}';
const BLOCKED = '{blocked}';
const SCREENING = '{screening}';
const polite = (upstream: string): string => `{polite:${upstream}}`;

/** The operator's lists (redis-list-store.ts): data of record. */
export const LISTS_KEYS = {
  /** Hash, rule spelling → the rule's other fields as JSON. */
  rules: `${LISTS}:rules`,
  /** Counter, +1 for every change. */
  version: `${LISTS}:version`,
  /** Stream of the changes. */
  changes: `${LISTS}:changes`,
  /** The lists' lineage (a new one when an instance writes back lists Redis lost). */
  epoch: `${LISTS}:epoch`,
  /** A staged import or restore, moved in place by one script (expires if abandoned). */
  staged: (id: string): string => `${LISTS}:staged:${id}`,
} as const;

/** The reporters' votes (redis-report-store.ts): data of record. */
export const REPORTS_KEYS = {
  /** The hashes' names start with this: the scripts that delete votes build them from it. */
  numberPrefix: `${REPORTS}:n:`,
  /** Hash, token id → the vote as JSON. */
  number: (e164: string): string => `${REPORTS}:n:${e164}`,
  /** Sorted set, `<e164> <token id>` by the vote's time: the index of every vote. */
  expiry: `${REPORTS}:expiry`,
  /** A token's count of votes on a UTC day. */
  cap: (day: string, tokenId: string): string => `${REPORTS}:cap:${day}:${tokenId}`,
  version: `${REPORTS}:version`,
  changes: `${REPORTS}:changes`,
  /** Sorted set, E.164 → when the operator took it out of the review (report-dismissals.ts). */
  dismissed: `${REPORTS}:dismissed`,
} as const;

/** The reporters' tokens (token-store.ts): data of record. */
export const TOKENS_KEYS = {
  /** Hash, token id → the token's record (its hash, never the token). */
  records: `${TOKENS}:records`,
} as const;

/**
 * Pub/sub channels (not keys: no slot, no key prefix of ioredis, so the store prepends
 * REDIS_KEY_PREFIX itself). Named as the keys they announce, tag included.
 */
export const CHANNELS = {
  /** A change of the tokens, published by the script that makes it. */
  tokens: `${TOKENS}:changed`,
} as const;

/** The blocked callers' record behind the feed (redis-blocked-callers.ts). */
export const BLOCKED_KEYS = {
  /** Sorted set, E.164 number by the time it was recorded. */
  log: `${BLOCKED}:log`,
  /** The number's score and reason, expiring on its own. */
  caller: (e164: string): string => `${BLOCKED}:caller:${e164}`,
} as const;

/** The console's record of screened calls (redis-screening-record.ts): one MULTI writes a batch to all three. */
export const SCREENING_KEYS = {
  /** Hash of one hour's counts (`v:<verdict>`, `d:<decidedBy>`, `reports`), by the hour's epoch ms. */
  hour: (hourMs: string): string => `${SCREENING}:hour:${hourMs}`,
  /** Sorted set, the call log: score the time of the call, member the entry as JSON. */
  calls: `${SCREENING}:calls`,
  /** Hash, feed client family → its last fetch. */
  feedClients: `${SCREENING}:feed-clients`,
} as const;

/** One upstream's politeness (redis-politeness-store.ts): a budget and its clients' shares in one script. */
export const POLITENESS_KEYS = {
  /** Hash {until, blocks}: the pause after a 403 or 429. */
  pause: (upstream: string): string => `${polite(upstream)}:pause`,
  /** Sliding log of the upstream's requests (its budget per minute). */
  budget: (upstream: string): string => `${polite(upstream)}:budget`,
  /** Sliding log of one client's requests to the upstream (its share), by the client's hash. */
  share: (upstream: string, client: string): string => `${polite(upstream)}:share:${client}`,
} as const;

/** The shared cache of the sources' results (redis-source-cache.ts): one key per entry. */
export const CACHE_KEYS = {
  entry: (key: string): string => `cache:${key}`,
} as const;

/** The fetch coalescer's lock (redis-fetch-coalescer.ts): one key per fetch. */
export const LOCK_KEYS = {
  fetch: (key: string): string => `lock:${key}`,
} as const;

/** The client rate limiter's sliding logs (redis-rate-limit-store.ts): one key per client bucket. */
export const RATE_LIMIT_KEYS = {
  log: (bucket: string): string => `rl:${bucket}`,
} as const;

/** Every group of keys, for the test and the docs. A new group goes here. */
export const REDIS_KEY_GROUPS = {
  lists: {
    tag: LISTS,
    usedBy: 'the lists’ change, import, restore and write-back scripts; the MULTI of a full read',
    keys: LISTS_KEYS,
  },
  reports: {
    tag: REPORTS,
    usedBy: 'the vote, expiry and restore scripts; the MULTI of a full read',
    keys: REPORTS_KEYS,
  },
  tokens: { tag: TOKENS, usedBy: 'the tokens’ scripts (one key, and their channel)', keys: TOKENS_KEYS },
  blocked: { tag: BLOCKED, usedBy: 'the MULTI of a record or a removal; the MGET of the feed', keys: BLOCKED_KEYS },
  screening: {
    tag: SCREENING,
    usedBy: 'the MULTI of a batch of screened calls (hours, call log), the pipelines of a read',
    keys: SCREENING_KEYS,
  },
  politeness: {
    // One tag per upstream, every builder's first part: `{polite:<upstream>}`.
    tag: polite,
    usedBy: 'the budget-and-share script (an upstream’s budget and a client’s share)',
    keys: POLITENESS_KEYS,
  },
  cache: { tag: null, usedBy: 'GET, SET, DEL of one entry', keys: CACHE_KEYS },
  locks: { tag: null, usedBy: 'SET NX and the renew and release scripts, one lock each', keys: LOCK_KEYS },
  rateLimit: { tag: null, usedBy: 'the sliding-log script, one client bucket each', keys: RATE_LIMIT_KEYS },
} as const satisfies Record<string, KeyGroup>;

/**
 * The part of a key Redis Cluster hashes: between the first `{` and the next `}` when that is
 * not empty, else the whole key.
 */
export function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  if (close === -1 || close === open + 1) return key;
  return key.slice(open + 1, close);
}
