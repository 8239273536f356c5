// The composition root: turns a Config into the running parts (numbering plan, HTTP client,
// upstream fetchers and adapters, cache, engine, rate-limit store) and knows how to close
// them. The only place that decides which implementation of each interface is used.
// With REDIS_URL, one Redis connection is shared by the cache, the rate limiter, the
// cross-instance coalescer and the upstream politeness store; each falls back to memory on its
// own while Redis is unusable.
import type { Logger } from 'pino';
import { resolve } from 'node:path';
import type { Config } from './config/config.js';
import type { AppDependencies } from './app.js';
import { createKeyedHasher } from './infra/hash.js';
import { createHttpClient } from './infra/http/http-client.js';
import { createUpstreamFetcher } from './infra/http/upstream-fetcher.js';
import { createMemoryRateLimitStore } from './infra/rate-limit/rate-limit-store.js';
import { createMemorySourceCache } from './infra/cache/memory-cache.js';
import { createLookupService } from './domain/lookup/lookup-service.js';
import { loadNumberingPlan, type NumberingPlan } from './domain/numbering/numbering-plan.js';
import { createPhoneNumberParser } from './domain/numbering/parse-phone-number.js';
import { memoizeParser } from './domain/numbering/memoize-parser.js';
import { createTellowsSource } from './sources/tellows/tellows-source.js';
import { createNumeroinconnuSource } from './sources/numeroinconnu/numeroinconnu-source.js';
import { createTelguarderSource } from './sources/telguarder/telguarder-source.js';
import type { SourcesBySlot } from './sources/source.js';
import type { UpstreamFetcher } from './infra/http/types.js';
import { createRedisClient, type RedisClient, type RedisHealth } from './infra/redis/redis-client.js';
import { createRedisRateLimitStore } from './infra/rate-limit/redis-rate-limit-store.js';
import { createRedisSourceCache, DEFAULT_LOCAL_MAX_ENTRIES } from './infra/cache/redis-source-cache.js';
import { createRedisFetchCoalescer } from './infra/redis/redis-fetch-coalescer.js';
import { createRedisPolitenessStore } from './infra/http/redis-politeness-store.js';
import type { PolitenessStore } from './infra/http/politeness-store.js';
import { Registry } from 'prom-client';
import { createServiceMetrics, type ServiceMetrics } from './infra/metrics/service-metrics.js';
import { instrumentSourceCache, instrumentUpstreamFetcher } from './infra/metrics/instrument.js';
import { createReadinessCheck, createUpstreamOutcomeTracker, type ReadinessCheck, type RedisStatus } from './infra/readiness/readiness.js';
import { SOURCE_SLOTS, type SourceSlot } from './domain/report.js';

export interface ServiceOverrides {
  /** Replaces the real adapters (contract tests inject fakes here). */
  sources?: SourcesBySlot;
  numberingPlan?: NumberingPlan;
  /** What /health/ready reports for Redis (the Redis wiring passes its connection state). */
  redisStatus?: () => RedisStatus | Promise<RedisStatus>;
}

export interface ServiceDependencies {
  app: Omit<AppDependencies, 'logger'>;
  numberingPlan: NumberingPlan;
  fetchers: UpstreamFetcher[];
  /** Present when REDIS_URL is set: its health for the readiness report. */
  redis?: { health(): RedisHealth };
  /** Absent when METRICS_ENABLED=false; its registry also feeds the METRICS_PORT server. */
  metrics?: ServiceMetrics;
  readiness: ReadinessCheck;
  /** Readiness turns `down` (503) from here on, so a load balancer stops sending traffic. */
  beginShutdown(): void;
  close(): Promise<void>;
}

/** A coalescing lock outlives one fetch (the source deadline, retries included) by this margin. */
const LOCK_MARGIN_MS = 1000;

export async function createServiceDependencies(config: Config, logger?: Logger, overrides: ServiceOverrides = {}): Promise<ServiceDependencies> {
  const hashKey = createKeyedHasher(config.HASH_SECRET);
  const numberingPlan = overrides.numberingPlan ?? loadNumberingPlan(resolve(config.ARCEP_DATA_DIR));
  const parsePhoneNumber = memoizeParser(createPhoneNumberParser(numberingPlan, config.DEFAULT_REGION));

  const redisClient: RedisClient | undefined =
    config.REDIS_URL === undefined ? undefined : createRedisClient(config.REDIS_URL, { keyPrefix: config.REDIS_KEY_PREFIX, logger });
  // One store for every upstream: its keys are per upstream.
  const politeness: PolitenessStore | undefined = redisClient ? createRedisPolitenessStore({ client: redisClient }) : undefined;

  // A registry of our own, never prom-client's global one: two apps in one process (tests,
  // the CLI) each count their own.
  const metrics = config.METRICS_ENABLED ? createServiceMetrics({ registry: new Registry() }) : undefined;

  const httpClient = createHttpClient();
  const fetcher = (upstream: string, requestsPerMinute: number): UpstreamFetcher => {
    const created = createUpstreamFetcher({ upstream, client: httpClient, requestsPerMinute, maxConcurrency: config.UPSTREAM_CONCURRENCY, politeness });
    return metrics ? instrumentUpstreamFetcher(created, metrics) : created;
  };
  const fetchers: UpstreamFetcher[] = [];
  const fetchersBySlot: Record<SourceSlot, UpstreamFetcher[]> = { primary: [], community: [], signals: [] };
  let sources = overrides.sources;
  if (!sources) {
    const tellowsApi = fetcher('tellows', config.TELLOWS_RPM);
    const tellowsWeb = fetcher('tellows-web', config.TELLOWS_RPM);
    const numeroinconnu = fetcher('numeroinconnu', config.NUMEROINCONNU_RPM);
    const telguarder = fetcher('telguarder', config.TELGUARDER_RPM);
    fetchers.push(tellowsApi, tellowsWeb, numeroinconnu, telguarder);
    fetchersBySlot.primary.push(tellowsApi, tellowsWeb);
    fetchersBySlot.community.push(numeroinconnu);
    fetchersBySlot.signals.push(telguarder);
    sources = {
      primary: createTellowsSource({
        apiUrl: config.TELLOWS_API_URL,
        webUrl: config.TELLOWS_WEB_URL,
        apiKey: config.TELLOWS_API_KEY,
        partner: config.TELLOWS_PARTNER,
        apiFetcher: tellowsApi,
        webFetcher: tellowsWeb,
        logger,
      }),
      community: createNumeroinconnuSource({ baseUrl: config.NUMEROINCONNU_URL, fetcher: numeroinconnu }),
      signals: createTelguarderSource({ baseUrl: config.TELGUARDER_URL, fetcher: telguarder }),
    };
  }

  const sharedCache = redisClient
    ? createRedisSourceCache({ client: redisClient, localMaxEntries: Math.min(config.CACHE_MAX_ENTRIES, DEFAULT_LOCAL_MAX_ENTRIES) })
    : createMemorySourceCache({ maxEntries: config.CACHE_MAX_ENTRIES });
  const cache = metrics ? instrumentSourceCache(sharedCache, redisClient ? 'redis' : 'memory', metrics) : sharedCache;
  const coalescer = redisClient ? createRedisFetchCoalescer({ client: redisClient, lockTtlMs: config.SOURCE_TIMEOUT_MS + LOCK_MARGIN_MS }) : undefined;
  const outcomes = createUpstreamOutcomeTracker();
  const lookupService = createLookupService({
    sources,
    cache,
    hashKey,
    config,
    logger,
    coalescer,
    onSourceOutcome: (event) => {
      outcomes.record(event);
      metrics?.recordSourceOutcome(event);
    },
  });
  const rateLimitStore = redisClient ? createRedisRateLimitStore({ client: redisClient }) : createMemoryRateLimitStore();

  const sourcesBySlot = sources;
  const upstreamNames = SOURCE_SLOTS.map((slot) => ({ slot, name: sourcesBySlot[slot].name }));
  /** A source is paused when every fetcher behind it is (tellows falls back from its API to its site). */
  const pausedUntilMs = (slot: SourceSlot): number => {
    const pauses = fetchersBySlot[slot].map((f) => f.pausedUntil());
    return pauses.length > 0 && pauses.every((until) => until > 0) ? Math.min(...pauses) : 0;
  };
  metrics?.watchUpstreams({
    pauses: fetchers.map((f) => ({ upstream: f.upstream, pausedUntilMs: () => f.pausedUntil() })),
    circuits: upstreamNames.map(({ slot, name }) => ({ slot, upstream: name, state: () => lookupService.breakerState(slot) })),
  });
  let shuttingDown = false;
  const readiness = createReadinessCheck({
    upstreams: upstreamNames.map(({ slot, name }) => ({
      name,
      slot,
      circuit: () => lookupService.breakerState(slot),
      pausedUntilMs: () => pausedUntilMs(slot),
      lastOutcome: () => outcomes.lastOutcome(slot),
    })),
    numberingDataDate: () => numberingPlan.dataDate,
    ...(overrides.redisStatus
      ? { redisStatus: overrides.redisStatus }
      : redisClient
        ? { redisStatus: (): RedisStatus => redisClient.health() }
        : {}),
    isShuttingDown: () => shuttingDown,
  });

  return {
    app: { config, parsePhoneNumber, lookupService, rateLimitStore, hashKey, metrics, readiness },
    numberingPlan,
    fetchers,
    ...(redisClient ? { redis: { health: () => redisClient.health() } } : {}),
    metrics,
    readiness,
    beginShutdown: () => {
      shuttingDown = true;
    },
    close: async () => {
      shuttingDown = true;
      lookupService.close();
      await httpClient.close();
      await redisClient?.quit();
    },
  };
}
