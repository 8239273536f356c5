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

export interface ServiceOverrides {
  /** Replaces the real adapters (contract tests inject fakes here). */
  sources?: SourcesBySlot;
  numberingPlan?: NumberingPlan;
}

export interface ServiceDependencies {
  app: Omit<AppDependencies, 'logger'>;
  numberingPlan: NumberingPlan;
  fetchers: UpstreamFetcher[];
  /** Present when REDIS_URL is set: its health for the readiness report. */
  redis?: { health(): RedisHealth };
  close(): Promise<void>;
}

/** A coalescing lock outlives one fetch (the source deadline, retries included) by this margin. */
const LOCK_MARGIN_MS = 1000;

export async function createServiceDependencies(config: Config, logger?: Logger, overrides: ServiceOverrides = {}): Promise<ServiceDependencies> {
  const hashKey = createKeyedHasher(config.HASH_SECRET);
  const numberingPlan = overrides.numberingPlan ?? loadNumberingPlan(resolve(config.ARCEP_DATA_DIR));
  const parsePhoneNumber = createPhoneNumberParser(numberingPlan, config.DEFAULT_REGION);

  const redisClient: RedisClient | undefined =
    config.REDIS_URL === undefined ? undefined : createRedisClient(config.REDIS_URL, { keyPrefix: config.REDIS_KEY_PREFIX, logger });
  // One store for every upstream: its keys are per upstream.
  const politeness: PolitenessStore | undefined = redisClient ? createRedisPolitenessStore({ client: redisClient }) : undefined;

  const httpClient = createHttpClient();
  const fetcher = (upstream: string, requestsPerMinute: number): UpstreamFetcher =>
    createUpstreamFetcher({ upstream, client: httpClient, requestsPerMinute, maxConcurrency: config.UPSTREAM_CONCURRENCY, politeness });
  const fetchers: UpstreamFetcher[] = [];
  let sources = overrides.sources;
  if (!sources) {
    const tellowsApi = fetcher('tellows', config.TELLOWS_RPM);
    const tellowsWeb = fetcher('tellows-web', config.TELLOWS_RPM);
    const numeroinconnu = fetcher('numeroinconnu', config.NUMEROINCONNU_RPM);
    const telguarder = fetcher('telguarder', config.TELGUARDER_RPM);
    fetchers.push(tellowsApi, tellowsWeb, numeroinconnu, telguarder);
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

  const cache = redisClient
    ? createRedisSourceCache({ client: redisClient, localMaxEntries: Math.min(config.CACHE_MAX_ENTRIES, DEFAULT_LOCAL_MAX_ENTRIES) })
    : createMemorySourceCache({ maxEntries: config.CACHE_MAX_ENTRIES });
  const coalescer = redisClient ? createRedisFetchCoalescer({ client: redisClient, lockTtlMs: config.SOURCE_TIMEOUT_MS + LOCK_MARGIN_MS }) : undefined;
  const lookupService = createLookupService({ sources, cache, hashKey, config, logger, coalescer });
  const rateLimitStore = redisClient ? createRedisRateLimitStore({ client: redisClient }) : createMemoryRateLimitStore();

  return {
    app: { config, parsePhoneNumber, lookupService, rateLimitStore, hashKey },
    numberingPlan,
    fetchers,
    ...(redisClient ? { redis: { health: () => redisClient.health() } } : {}),
    close: async () => {
      lookupService.close();
      await httpClient.close();
      await redisClient?.quit();
    },
  };
}
