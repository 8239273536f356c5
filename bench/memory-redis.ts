// Redis bytes per cached number: the three entries of N numbers written through the Redis
// source cache (the engine's keys, the sample data, the stored form), then measured with
// MEMORY USAGE per key (key, value and Redis's own per-key overhead) and STRLEN (the stored
// text alone). Works under a random key prefix on the Redis at BENCH_REDIS_URL (default
// 127.0.0.1:6379) and deletes its keys afterwards, whatever happens.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import type { SourceSlot } from '../src/domain/report.js';
import { SOURCE_SLOTS } from '../src/domain/report.js';
import { createRedisSourceCache } from '../src/infra/cache/redis-source-cache.js';
import { sourceCacheKeyOf, type CachedSourceResult } from '../src/domain/ports/source-cache.js';
import { createKeyedHasher } from '../src/infra/hash.js';
import { createRedisClient } from '../src/infra/redis/redis-client.js';
import { SAMPLE_DATA } from '../harness/lookup.js';

export interface RedisFigures {
  numbers: number;
  keys: number;
  /** Sum of MEMORY USAGE over every key written. */
  memoryUsageBytes: number;
  /** Sum of STRLEN: the stored text alone. */
  valueBytes: number;
  /** Sum of the key lengths as Redis sees them (prefix included). */
  keyBytes: number;
}

const BATCH = 100;
/** Generous: this measures bytes, not latency, on a shared machine where a busy core can hold a reply for a while. */
const COMMAND_TIMEOUT_MS = 10_000;

async function deleteUnder(admin: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await admin.unlink(...keys);
  } while (cursor !== '0');
}

export async function measureRedisBytes(
  numbers: number,
  url = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
): Promise<RedisFigures> {
  const prefix = `bench:memory:${randomBytes(5).toString('hex')}:`;
  const admin = new Redis(url, { maxRetriesPerRequest: 1 });
  const client = createRedisClient(url, {
    keyPrefix: prefix,
    connectTimeoutMs: 5000,
    commandTimeoutMs: COMMAND_TIMEOUT_MS,
  });
  try {
    await admin.ping();
    if (client.redis.status !== 'ready') await once(client.redis, 'ready');
    if (!client.isReady()) throw new Error('the Redis client is not ready');
    const cache = createRedisSourceCache({ client, localMaxEntries: 1 });
    const hashKey = createKeyedHasher('bench-secret-0123456789');
    const nowMs = Date.now();
    const fetchedAt = new Date(nowMs).toISOString();
    const written: string[] = [];
    for (let start = 0; start < numbers; start += BATCH) {
      const writes: Promise<void>[] = [];
      for (let index = start; index < Math.min(numbers, start + BATCH); index += 1) {
        const numberHash = hashKey(`+336${String(index).padStart(8, '0')}`);
        for (const slot of SOURCE_SLOTS) {
          const key = sourceCacheKeyOf(slot, numberHash);
          const value: CachedSourceResult = {
            status: 'ok',
            data: SAMPLE_DATA[slot satisfies SourceSlot],
            fetchedAt,
            freshUntil: nowMs + 21_600_000,
            staleUntil: nowMs + 626_400_000,
          };
          writes.push(cache.set(key, value, 626_400));
          written.push(`${prefix}cache:${key}`);
        }
      }
      await Promise.all(writes);
    }
    const figures: RedisFigures = { numbers, keys: 0, memoryUsageBytes: 0, valueBytes: 0, keyBytes: 0 };
    for (let start = 0; start < written.length; start += BATCH) {
      const keys = written.slice(start, start + BATCH);
      const pipeline = admin.pipeline();
      for (const key of keys) pipeline.memory('USAGE', key, 'SAMPLES', '0').strlen(key);
      const replies = (await pipeline.exec()) ?? [];
      for (let index = 0; index < keys.length; index += 1) {
        const [usageError, usage] = replies[index * 2] ?? [null, null];
        const [lengthError, length] = replies[index * 2 + 1] ?? [null, null];
        if (
          usageError !== null ||
          lengthError !== null ||
          typeof usage !== 'number' ||
          typeof length !== 'number' ||
          length === 0
        ) {
          throw new Error(
            `key ${start + index} of ${written.length} is not in Redis: the cache write fell back to memory (Redis too slow or unreachable)`,
          );
        }
        figures.keys += 1;
        figures.memoryUsageBytes += usage;
        figures.valueBytes += length;
        figures.keyBytes += keys[index]?.length ?? 0;
      }
    }
    return figures;
  } finally {
    await deleteUnder(admin, prefix).catch(() => undefined);
    await client.quit().catch(() => undefined);
    admin.disconnect();
  }
}
