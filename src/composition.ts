// The composition root: turns a Config into the running parts (numbering plan, HTTP client,
// upstream fetchers and adapters, cache, engine, rate-limit store) and knows how to close
// them. The only place that decides which implementation of each interface is used.
// With REDIS_URL or REDIS_SENTINELS, one Redis connection is shared by the cache, the rate limiter, the
// cross-instance coalescer, the upstream politeness store, the operator's lists and the
// reporters' votes; the first four fall back to memory on their own while Redis is unusable, and
// the lists and the votes keep what they hold (a change is refused meanwhile).
import type { Logger } from 'pino';
import {
  arcepLocationOf,
  listsLocationOf,
  redisConnectionOf,
  settingsForDisplay,
  type Config,
} from './config/config.js';
import { packageVersion } from './config/package-info.js';
import type { AppDependencies } from './app.js';
import { createKeyedHasher } from './infra/hash.js';
import { createHttpClient } from './infra/http/http-client.js';
import { createMemoryRateLimitStore, type RateLimitStore } from './infra/rate-limit/rate-limit-store.js';
import { createMemorySourceCache, type MemorySourceCache } from './infra/cache/memory-cache.js';
import { createLookupService, type LookupTimings } from './domain/lookup/lookup-service.js';
import { createFrontCache } from './http/front-cache.js';
import { cacheBudgetOf } from './infra/cache/cache-budget.js';
import type { NumberingPlan } from './domain/numbering/numbering-plan.js';
import { loadNumberingPlan, numberingDataInUse } from './infra/arcep/load-numbering-plan.js';
import { createPhoneNumberParser } from './domain/numbering/parse-phone-number.js';
import { memoizeParser } from './domain/numbering/memoize-parser.js';
import { UPSTREAMS, UPSTREAMS_BY_SLOT } from './sources/upstreams.js';
import { createScheduledCanary, type ScheduledCanary } from './sources/canary.js';
import {
  buildSource,
  createUpstreamFetchers,
  type SourceWiring,
  type UpstreamDescription,
} from './sources/common/wiring.js';
import type { SourcesBySlot } from './domain/ports/source.js';
import type { SourceResultCache } from './domain/ports/source-cache.js';
import type { UpstreamFetcher } from './infra/http/types.js';
import { createRedisClient, type RedisClient, type RedisHealth } from './infra/redis/redis-client.js';
import { createRedisRateLimitStore } from './infra/rate-limit/redis-rate-limit-store.js';
import { createRedisSourceCache, DEFAULT_LOCAL_MAX_ENTRIES } from './infra/cache/redis-source-cache.js';
import { createRedisFetchCoalescer, DEFAULT_LOCK_LEASE_MS } from './infra/redis/redis-fetch-coalescer.js';
import { createRedisPolitenessStore } from './infra/http/redis-politeness-store.js';
import type { PolitenessStore } from './infra/http/politeness-store.js';
import { Registry } from 'prom-client';
import { createServiceMetrics, type ServiceMetrics } from './infra/metrics/service-metrics.js';
import { instrumentSourceCache, instrumentUpstreamFetcher } from './infra/metrics/instrument.js';
import {
  createReadinessCheck,
  createUpstreamOutcomeTracker,
  type ReadinessCheck,
  type RedisStatus,
} from './infra/readiness/readiness.js';
import { mapSlots, SOURCE_SLOTS, type SourceSlot } from './domain/report.js';
import type { ListStore } from './infra/lists/list-store.js';
import { openListStore } from './infra/lists/open-list-store.js';
import { openTokenStore, type TokenStore } from './infra/reports/token-store.js';
import type { OperatorLists } from './domain/ports/operator-lists.js';
import type { CallerReports } from './domain/ports/caller-reports.js';
import { createBlocklistFeed, type BlocklistFeed } from './infra/blocklist/blocklist-feed.js';
import { createMemoryBlockedCallerLog } from './infra/blocklist/memory-blocked-callers.js';
import { createRedisBlockedCallerLog } from './infra/blocklist/redis-blocked-callers.js';
import { npvPrefixesE164 } from './domain/numbering/parse-phone-number.js';
import type { VerdictRule } from './domain/verdict.js';
import { openReportStore, type ReportSettings, type ReportStore } from './infra/reports/report-store.js';
import { createMemoryScreeningRecord } from './infra/screening/memory-screening-record.js';
import { createRedisScreeningRecord } from './infra/screening/redis-screening-record.js';
import { createScreeningRecorder, type ScreeningRecorder } from './infra/screening/screening-recorder.js';
import type { SourceState } from './http/routes/admin-stats-routes.js';
import { openReportDismissals } from './infra/reports/report-dismissals.js';

/** The `/verdict` rule (VERDICT_*), which the text routes and the blocklist feed share. */
export function verdictRuleOf(
  config: Pick<
    Config,
    | 'VERDICT_BLOCK_SCORE'
    | 'VERDICT_WARN_SCORE'
    | 'VERDICT_NPV'
    | 'VERDICT_WITHHELD'
    | 'VERDICT_CALL_CENTRE'
    | 'VERDICT_OUTSIDE_HOURS'
  >,
): VerdictRule {
  return {
    blockScore: config.VERDICT_BLOCK_SCORE,
    warnScore: config.VERDICT_WARN_SCORE,
    npv: config.VERDICT_NPV,
    withheld: config.VERDICT_WITHHELD,
    callCentre: config.VERDICT_CALL_CENTRE,
    outsideHours: config.VERDICT_OUTSIDE_HOURS,
  };
}

/** The reports' rule and cap (REPORT_*), which the report store and the routes share. */
export function reportSettingsOf(
  config: Pick<
    Config,
    'REPORT_HALF_LIFE_DAYS' | 'REPORT_MIN_REPORTERS' | 'REPORT_RETENTION_DAYS' | 'REPORT_MAX_PER_TOKEN_DAY'
  >,
): ReportSettings {
  return {
    halfLifeDays: config.REPORT_HALF_LIFE_DAYS,
    minReporters: config.REPORT_MIN_REPORTERS,
    retentionDays: config.REPORT_RETENTION_DAYS,
    maxPerTokenDay: config.REPORT_MAX_PER_TOKEN_DAY,
  };
}

export interface ServiceOverrides {
  /** Replaces the real adapters (contract tests inject fakes here). */
  sources?: SourcesBySlot;
  numberingPlan?: NumberingPlan;
  /** What /health/ready reports for Redis (the Redis wiring passes its connection state). */
  redisStatus?: () => RedisStatus | Promise<RedisStatus>;
  /** Replaces the rate limiter's store (tests give the memory store their own clock). */
  rateLimitStore?: RateLimitStore;
  /** Wraps the per-slot cache the engine uses (tests watch what is read and written). */
  decorateSourceCache?: (cache: SourceResultCache) => SourceResultCache;
  /** Replaces the operator's lists store (tests give one of their own). */
  lists?: ListStore;
  /** Replaces the reporters' tokens store (tests give one of their own). */
  tokens?: TokenStore;
  /** How long a /metrics render serves later scrapes (default 1 s; 0 for tests that read counts right after traffic). */
  metricsRenderIntervalMs?: number;
  /** The operator's allow and block lists (tests give an in-memory one). */
  operatorLists?: OperatorLists;
  /** The blocklist feed's rebuild interval (default 10 s). */
  feedRefreshIntervalMs?: number;
  /** Replaces the reporters' votes store (tests give one of their own). */
  reports?: ReportStore;
  /** What the deployment's reporters said (tests give an in-memory one: harness/caller-reports.ts). */
  callerReports?: CallerReports;
  /**
   * The engine's and the phone routes' clock (epoch ms; default Date.now): tests set the time of
   * a call (the legal hours, docs/legal-hours.md) and the slots' freshness follows the same clock.
   */
  now?: () => number;
}

export interface ServiceDependencies {
  app: Omit<AppDependencies, 'logger'>;
  numberingPlan: NumberingPlan;
  /** The folder whose ARCEP files are in use and which it is (ARCEP_DATA_DIR, the state directory's update, or the snapshot). */
  numberingData: { dir: string; origin: 'configured' | 'updated' | 'snapshot' };
  fetchers: UpstreamFetcher[];
  /** Present when REDIS_URL is set: its health for the readiness report. */
  redis?: { health(): RedisHealth };
  /** Absent when METRICS_ENABLED=false; its registry also feeds the METRICS_PORT server. */
  metrics?: ServiceMetrics;
  readiness: ReadinessCheck;
  /** The operator's allow and block lists (file or Redis: docs/lists.md). */
  lists: ListStore;
  /** The reporters' votes and their evidence, in the lists' store (docs/reports.md). */
  reports: ReportStore;
  /** The reporters' tokens, in the lists' store (the file beside the lists file, or Redis: docs/reports.md). */
  tokens: TokenStore;
  /** Present when CANARY_INTERVAL_S > 0 (and the real adapters are in use): the scheduled canary, already started. */
  canary?: ScheduledCanary;
  /** Present when FEED_PASSWORD is set: the blocklist feed, already started. */
  blocklistFeed?: BlocklistFeed;
  /** The console's record of screened calls (docs/console.md), already started. */
  screening: ScreeningRecorder;
  /** Readiness turns `down` (503) from here on, so a load balancer stops sending traffic. */
  beginShutdown(): void;
  close(): Promise<void>;
}

/** How long the start waits for Redis' first answer, to tell refused credentials from a Redis still away. */
const FIRST_CONNECTION_WAIT_MS = 2000;

/** Why the start stops when Redis (or a sentinel) refused the credentials, naming the variables. */
export function redisRefusalMessage(
  config: Pick<Config, 'REDIS_URL' | 'REDIS_USERNAME' | 'REDIS_PASSWORD' | 'REDIS_SENTINEL_PASSWORD' | 'REDIS_TLS_CA'>,
  refused: 'credentials' | 'certificate',
  error: Error,
): string {
  // Redis' own words (WRONGPASS, NOAUTH…) name no credential; cut to one short line all the same.
  const said = error.message.replace(/\s+/g, ' ').slice(0, 200);
  if (refused === 'certificate')
    return `Redis' TLS certificate is not trusted: ${config.REDIS_TLS_CA === undefined ? 'set REDIS_TLS_CA to the PEM file of the authority that signed it' : 'check REDIS_TLS_CA (the authority that signed it) and the name in the certificate'} (${said})`;
  if (/All sentinels are unreachable/.test(error.message))
    return `the sentinels refused the login: check REDIS_SENTINEL_PASSWORD${config.REDIS_SENTINEL_PASSWORD === undefined ? ' (unset)' : ''} (${said})`;
  const given =
    config.REDIS_PASSWORD !== undefined
      ? config.REDIS_USERNAME === undefined
        ? 'REDIS_PASSWORD'
        : 'REDIS_USERNAME and REDIS_PASSWORD'
      : config.REDIS_URL !== undefined && /^rediss?:\/\/[^/]*@/.test(config.REDIS_URL)
        ? "REDIS_URL's user and password"
        : undefined;
  if (given === undefined)
    return `Redis requires a password: set REDIS_PASSWORD (and REDIS_USERNAME for an ACL user) (${said})`;
  return `Redis refused the login: check ${given} (${said})`;
}

/** The engine's deadlines and lifetimes, from the variables that set them. */
export function lookupTimingsOf(config: Config): LookupTimings {
  return {
    sourceTimeoutMs: config.SOURCE_TIMEOUT_MS,
    lookupTimeoutMs: config.LOOKUP_TIMEOUT_MS,
    cacheTtlSeconds: config.CACHE_TTL_S,
    notFoundTtlSeconds: config.CACHE_NOT_FOUND_TTL_S,
    staleSeconds: config.CACHE_STALE_S,
  };
}

export async function createServiceDependencies(
  config: Config,
  logger?: Logger,
  overrides: ServiceOverrides = {},
): Promise<ServiceDependencies> {
  const hashKey = createKeyedHasher(config.HASH_SECRET);
  // The state directory's copy once `data update` wrote one, else the package's snapshot.
  const numberingData = numberingDataInUse(arcepLocationOf(config));
  const numberingPlan = overrides.numberingPlan ?? loadNumberingPlan(numberingData.dir);
  // CACHE_MAX_MB is the machine's: each of WORKERS processes gets its share, split between
  // everything held per number (cache-budget.ts, docs/cache.md).
  const budget = cacheBudgetOf(config.CACHE_MAX_MB, config.workers);
  const parsePhoneNumber = memoizeParser(createPhoneNumberParser(numberingPlan, config.DEFAULT_REGION), {
    maxBytes: budget.parserMemoBytes,
  });

  // REDIS_URL, or the primary REDIS_SENTINELS name, with the credentials and TLS: the one
  // description every connection is made from (the stores' readers and subscribers duplicate it).
  const redisConnection = redisConnectionOf(config);
  const redisClient: RedisClient | undefined =
    redisConnection === undefined
      ? undefined
      : createRedisClient(redisConnection, {
          keyPrefix: config.REDIS_KEY_PREFIX,
          commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
          logger,
        });
  // A Redis that cannot be reached yet leaves the fallbacks on; one that refuses the credentials
  // never lets them in, so the start stops here, naming the variables to fix.
  if (redisClient !== undefined) {
    const first = await redisClient.firstConnection(FIRST_CONNECTION_WAIT_MS);
    if (first.state === 'refused') {
      await redisClient.quit();
      throw new Error(redisRefusalMessage(config, first.refused, first.error));
    }
  }
  // One store for every upstream: its keys are per upstream.
  const politeness: PolitenessStore | undefined = redisClient
    ? createRedisPolitenessStore({ client: redisClient })
    : undefined;

  // A registry of our own, never prom-client's global one: two apps in one process (tests,
  // the CLI) each count their own.
  const renderInterval =
    overrides.metricsRenderIntervalMs === undefined ? {} : { renderIntervalMs: overrides.metricsRenderIntervalMs };
  const metrics = config.METRICS_ENABLED
    ? createServiceMetrics({ registry: new Registry(), ...renderInterval })
    : undefined;

  const httpClient = createHttpClient();
  const wiring: SourceWiring = {
    client: httpClient,
    ...(politeness === undefined ? {} : { politeness }),
    ...(metrics === undefined
      ? {}
      : { decorate: (created: UpstreamFetcher) => instrumentUpstreamFetcher(created, metrics) }),
  };
  const fetchers: UpstreamFetcher[] = [];
  const fetchersBySlot = mapSlots<Record<SourceSlot, UpstreamFetcher[]>>(() => []);
  // Each upstream's fetchers are built once, from its description: lookups and the scheduled
  // canary share them, so the canary spends the same budget and honours the same pauses.
  const fetchersByUpstream = new Map<string, ReadonlyMap<string, UpstreamFetcher>>();
  const sourceOf = <S extends SourceSlot>(description: UpstreamDescription<S>) => {
    const built = createUpstreamFetchers(description, config, wiring);
    fetchersByUpstream.set(description.name, built);
    fetchers.push(...built.values());
    fetchersBySlot[description.slot].push(...built.values());
    return buildSource(description, config, built, logger === undefined ? {} : { logger });
  };
  const sources: SourcesBySlot =
    overrides.sources ??
    mapSlots<SourcesBySlot>((slot) => sourceOf(UPSTREAMS_BY_SLOT[slot]) as SourcesBySlot[typeof slot]);

  const frontCache = createFrontCache({ maxBytes: budget.frontBytes, spellingsMaxBytes: budget.frontSpellingsBytes });
  let memoryCache: MemorySourceCache | undefined;
  const sharedCache = redisClient
    ? createRedisSourceCache({
        client: redisClient,
        localMaxEntries: Math.min(config.CACHE_MAX_ENTRIES ?? DEFAULT_LOCAL_MAX_ENTRIES, DEFAULT_LOCAL_MAX_ENTRIES),
      })
    : (memoryCache = createMemorySourceCache({
        maxBytes: budget.sourceBytes,
        ...(config.CACHE_MAX_ENTRIES === undefined ? {} : { maxEntries: config.CACHE_MAX_ENTRIES }),
      }));
  metrics?.watchCacheMemory({
    maxBytes: budget.processBytes,
    charged: () => ({
      source: memoryCache?.chargedBytes() ?? 0,
      front: frontCache.charges().entries,
      spellings: frontCache.charges().spellings + parsePhoneNumber.chargedBytes(),
    }),
    entries: () => ({
      source: memoryCache?.size() ?? 0,
      front: frontCache.size(),
      spellings: frontCache.spellingCount(),
    }),
  });
  const instrumented = metrics
    ? instrumentSourceCache(sharedCache, redisClient ? 'redis' : 'memory', metrics)
    : sharedCache;
  const cache = overrides.decorateSourceCache ? overrides.decorateSourceCache(instrumented) : instrumented;
  // A flight waits for another instance's fetch of its key at most one fetch and two leases.
  const coalescer = redisClient
    ? createRedisFetchCoalescer({
        client: redisClient,
        maxWaitMs: config.SOURCE_TIMEOUT_MS + 2 * DEFAULT_LOCK_LEASE_MS,
      })
    : undefined;
  const outcomes = createUpstreamOutcomeTracker();
  const lookupService = createLookupService({
    sources,
    cache,
    hashKey,
    timings: lookupTimingsOf(config),
    logger,
    coalescer,
    ...(overrides.now === undefined ? {} : { now: overrides.now }),
    onSourceOutcome: (event) => {
      outcomes.record(event);
      metrics?.recordSourceOutcome(event);
    },
    onSlotWritten: (numberHash) => {
      frontCache.invalidate(numberHash);
    },
  });
  // The operator's lists: file or Redis. A file that does not parse stops the start here.
  const lists =
    overrides.lists ??
    (await openListStore(listsLocationOf(config), {
      context: { parsePhoneNumber, defaultRegion: config.DEFAULT_REGION },
      hashKey,
      watch: true,
      ...(redisClient === undefined ? {} : { redisClient }),
      ...(logger === undefined ? {} : { logger }),
    }));
  metrics?.watchLists(() => lists.countByList());
  // The reporters' votes, in the same store as the lists (reports.jsonl beside the file, or Redis).
  const reports =
    overrides.reports ??
    (await openReportStore(listsLocationOf(config), {
      settings: reportSettingsOf(config),
      watch: true,
      ...(redisClient === undefined ? {} : { redisClient }),
      ...(logger === undefined ? {} : { logger }),
    }));
  // The reporters' tokens, where the lists are; followed like them (a token the CLI creates is
  // accepted within a second). A tokens file that does not parse stops the start here.
  let tokens: TokenStore;
  try {
    tokens =
      overrides.tokens ??
      (await openTokenStore(listsLocationOf(config), {
        watch: true,
        ...(redisClient === undefined ? {} : { redisClient }),
        ...(logger === undefined ? {} : { logger }),
      }));
  } catch (error) {
    if (overrides.reports === undefined) await reports.close();
    if (overrides.lists === undefined) await lists.close();
    throw error;
  }
  metrics?.watchReportTokens(() => tokens.countInForce());
  const rateLimitStore =
    overrides.rateLimitStore ??
    (redisClient ? createRedisRateLimitStore({ client: redisClient }) : createMemoryRateLimitStore());

  // CANARY_INTERVAL_S: rounds through the lookups' own fetchers (same budget, same pauses).
  const canary: ScheduledCanary | undefined =
    config.CANARY_INTERVAL_S > 0 && overrides.sources === undefined
      ? createScheduledCanary({
          config,
          upstreams: UPSTREAMS,
          fetchersByUpstream,
          // The canary's own parser, as the manual canary: the default numbers come from
          // ARCEP's fiction ranges, which the service's plan-aware parser refuses as unassigned.
          intervalMs: config.CANARY_INTERVAL_S * 1000,
          ...(metrics === undefined ? {} : { reporter: metrics }),
          ...(logger === undefined ? {} : { logger }),
        })
      : undefined;
  canary?.start();

  const sourcesBySlot = sources;
  const upstreamNames = SOURCE_SLOTS.map((slot) => ({ slot, name: sourcesBySlot[slot].name }));
  /** A source is paused when every fetcher behind it is (tellows falls back from its API to its site). */
  const pausedUntilMs = (slot: SourceSlot): number => {
    const pauses = fetchersBySlot[slot].map((f) => f.pausedUntil());
    return pauses.length > 0 && pauses.every((until) => until > 0) ? Math.min(...pauses) : 0;
  };
  metrics?.watchUpstreams({
    pauses: fetchers.map((f) => ({ upstream: f.upstream, pausedUntilMs: () => f.pausedUntil() })),
    circuits: upstreamNames.map(({ slot, name }) => ({
      slot,
      upstream: name,
      state: () => lookupService.breakerState(slot),
    })),
  });
  // The one verdict rule: the text routes and the feed decide block, warn and allow by it alike.
  const verdictRule = verdictRuleOf(config);
  // The operator's lists as the feed reads them: the store above (file or Redis), unless a test gives its own.
  const operatorLists: OperatorLists = overrides.operatorLists ?? lists;
  // The reports' evidence, read by the phone routes and the feed (docs/reports.md "In the answers").
  const callerReports: CallerReports = overrides.callerReports ?? reports;
  // The blocklist feed, only when FEED_PASSWORD is set: nothing is recorded otherwise.
  const retentionMs = config.FEED_RETENTION_DAYS * 86_400_000;
  const blockedCallers =
    config.FEED_PASSWORD === undefined
      ? undefined
      : redisClient
        ? createRedisBlockedCallerLog({ client: redisClient, maxEntries: config.FEED_MAX_ENTRIES, retentionMs })
        : createMemoryBlockedCallerLog({ maxEntries: config.FEED_MAX_ENTRIES, retentionMs });
  const blocklistFeed: BlocklistFeed | undefined =
    blockedCallers === undefined
      ? undefined
      : createBlocklistFeed({
          log: blockedCallers,
          lists: operatorLists,
          reports: callerReports,
          npvPrefixes: npvPrefixesE164(),
          callCentrePrefixes: numberingPlan.callCentrePrefixes().map((national) => `+33${national.slice(1)}`),
          rule: verdictRule,
          cidMaxLength: config.CID_MAX_LENGTH,
          maxEntries: config.FEED_MAX_ENTRIES,
          ...(overrides.feedRefreshIntervalMs === undefined
            ? {}
            : { refreshIntervalMs: overrides.feedRefreshIntervalMs }),
          ...(logger === undefined
            ? {}
            : {
                onError: (error: unknown) =>
                  logger.error(
                    { err: { type: error instanceof Error ? error.name : typeof error } },
                    'blocklist feed rebuild failed: the feed answers 503 until a rebuild succeeds',
                  ),
              }),
        });
  blocklistFeed?.start();

  // The console's record (docs/console.md): counters and call log, in Redis when there is one.
  const recordOptions = {
    statsDays: config.STATS_DAYS,
    callLogRetentionDays: config.CALL_LOG_RETENTION_DAYS,
    callLogMaxEntries: config.CALL_LOG_MAX_ENTRIES,
    ...(overrides.now === undefined ? {} : { now: overrides.now }),
  };
  const screening = createScreeningRecorder({
    record: redisClient
      ? createRedisScreeningRecord({ ...recordOptions, client: redisClient })
      : createMemoryScreeningRecord(recordOptions),
    logsCalls: config.CALL_LOG_RETENTION_DAYS > 0,
    ...(logger === undefined
      ? {}
      : {
          onError: (error: unknown) =>
            logger.error(
              { err: { type: error instanceof Error ? error.name : typeof error } },
              'screening record: a batch could not be recorded',
            ),
        }),
  });
  screening.start();
  const clock = overrides.now ?? Date.now;
  /** Each source as the console shows it: failing while its last real fetch failed, its breaker is open or it is paused. */
  /**
   * An upstream's budget: its per-minute limit, and what was spent of it in the sliding minute,
   * by every instance when the politeness store is shared (Redis) and can be read, else by this one.
   */
  const budgetOf = async (fetcher: UpstreamFetcher): Promise<{ used: number; perMinute: number }> => {
    const own = fetcher.budget?.();
    if (own === undefined) return { used: 0, perMinute: 0 };
    const shared = await politeness?.sharedBudgetUsed?.(fetcher.upstream);
    return { used: shared ?? own.used, perMinute: own.perMinute };
  };
  const sourceStates = (): Promise<SourceState[]> =>
    Promise.all(
      upstreamNames.map(async ({ slot, name }) => {
        const breaker = lookupService.breakerState(slot);
        const since = outcomes.failingSince(slot);
        const budgets = await Promise.all(fetchersBySlot[slot].map(budgetOf));
        const failing = since !== undefined || breaker === 'open' || pausedUntilMs(slot) > clock();
        return {
          slot,
          name,
          state: failing ? 'failing' : 'ok',
          failingSince: since === undefined ? null : new Date(since).toISOString(),
          breaker,
          budgetUsed: budgets.reduce((total, budget) => total + budget.used, 0),
          budgetPerMinute: budgets.reduce((total, budget) => total + budget.perMinute, 0),
        };
      }),
    );

  let shuttingDown = false;
  const readiness = createReadinessCheck(
    {
      upstreams: upstreamNames.map(({ slot, name }) => ({
        name,
        slot,
        circuit: () => lookupService.breakerState(slot),
        pausedUntilMs: () => pausedUntilMs(slot),
        lastOutcome: () => outcomes.lastOutcome(slot),
        lastFailure: () => outcomes.lastFailure(slot),
        ...(canary === undefined ? {} : { layoutChanged: () => canary.layoutChanged(name) }),
      })),
      numberingDataDate: () => numberingPlan.dataDate,
      ...(overrides.redisStatus
        ? { redisStatus: overrides.redisStatus }
        : redisClient
          ? { redisStatus: (): RedisStatus => redisClient.health() }
          : {}),
      isShuttingDown: () => shuttingDown,
    },
    { numberingMaxAgeDays: config.ARCEP_MAX_AGE_DAYS },
  );

  return {
    app: {
      config,
      version: packageVersion(),
      parsePhoneNumber,
      lookupService,
      rateLimitStore,
      hashKey,
      verdictRule,
      metrics,
      readiness,
      frontCache,
      lists,
      tokens,
      reports: callerReports,
      ...(overrides.now === undefined ? {} : { now: overrides.now }),
      ...(blocklistFeed === undefined ? {} : { blocklistFeed }),
      reporting: { tokens, recorder: reports },
      screening: { recorder: screening, sources: sourceStates },
      // The console's admin routes: the votes to review and where dismissals are kept (with the
      // votes: Redis, or beside the lists file), the settings shown (secrets masked), the data.
      adminConsole: {
        reports: {
          votes: (e164: string) => reports.votes(e164),
          allVotes: () => reports.allVotes(),
          dismissals: openReportDismissals(listsLocationOf(config), {
            retentionDays: config.REPORT_RETENTION_DAYS,
            ...(redisClient === undefined ? {} : { redisClient }),
          }),
          rule: reportSettingsOf(config),
        },
        settings: settingsForDisplay(config),
        numberingData: {
          date: numberingPlan.dataDate,
          origin: numberingData.origin,
          blocks: numberingPlan.blockCount,
        },
      },
    },
    screening,
    lists,
    reports,
    tokens,
    numberingPlan,
    numberingData,
    fetchers,
    ...(redisClient ? { redis: { health: () => redisClient.health() } } : {}),
    metrics,
    readiness,
    ...(canary === undefined ? {} : { canary }),
    ...(blocklistFeed === undefined ? {} : { blocklistFeed }),
    beginShutdown: () => {
      shuttingDown = true;
      void canary?.stop();
    },
    close: async () => {
      shuttingDown = true;
      blocklistFeed?.stop();
      await screening.stop();
      await canary?.stop();
      await lists.close();
      await reports.close();
      await tokens.close();
      lookupService.close();
      await httpClient.close();
      await redisClient?.quit();
    },
  };
}
