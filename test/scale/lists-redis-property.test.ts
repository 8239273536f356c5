// A property of the lists on Redis (issue 44, finding 1): whatever the changes and whatever the
// order of restarts (Redis alone, one instance, Redis and every instance at once), no change a
// store acknowledged is lost, and none undone comes back. Two stores (two instances) share a
// redis-server of the test's own, persisting or coming back empty, with the lists file mirrored
// (LISTS_FILE set). A change refused while Redis comes back is sent again until acknowledged, as
// an operator would. Few runs, so the file stays within seconds.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createPhoneNumberParser } from '../../src/domain/numbering/parse-phone-number.js';
import { createRedisClient } from '../../src/infra/redis/redis-client.js';
import { openRedisListStore } from '../../src/infra/lists/redis-list-store.js';
import type { ListStore } from '../../src/infra/lists/list-store.js';
import type { ListName } from '../../src/domain/ports/operator-lists.js';
import { testNumberingPlan } from '../../harness/servers.js';
import { startOwnRedis } from '../support/redis-server.js';
import { waitFor } from '../support/redis.js';

const context = { parsePhoneNumber: createPhoneNumberParser(testNumberingPlan(), 'FR'), defaultRegion: 'FR' };
const PREFIX = 'phonerep:';
const RULES = ['+33163000001', '+33163000002', '+33164*', '+33612000001', '+3317*', '+33499000003'];

type Step =
  | { kind: 'put'; at: 0 | 1; rule: string; list: ListName }
  | { kind: 'remove'; at: 0 | 1; rule: string }
  | { kind: 'restart-redis' }
  | { kind: 'restart-instance'; at: 0 | 1 }
  | { kind: 'restart-all' };

const at = fc.constantFrom<0 | 1>(0, 1);
const rule = fc.constantFrom(...RULES);
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('put' as const),
      at,
      rule,
      list: fc.constantFrom<ListName>('allow', 'block'),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), at, rule }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'restart-redis' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restart-instance' as const), at }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'restart-all' as const }) },
);

/** Sends `change` again until the store acknowledges it (a refusal while Redis comes back changes nothing for sure, so it is retried). */
async function acknowledged<T>(change: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      return await change();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

describe('lists on Redis, random changes and restarts', () => {
  it('lose no acknowledged change, and bring back none undone', { timeout: 180_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(step, { minLength: 3, maxLength: 8 }), async (persistent, steps) => {
        const redis = await startOwnRedis({ persistent });
        const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
        admin.on('error', () => undefined);
        const path = join(mkdtempSync(join(tmpdir(), 'phone-rep-property-')), 'lists.csv');
        const open = (): Promise<ListStore> =>
          openRedisListStore({
            client: createRedisClient(redis.url, { keyPrefix: PREFIX }),
            ownsClient: true,
            file: { path, context, mirror: true },
          });
        const stores: ListStore[] = await Promise.all([open(), open()]);
        const model = new Map<string, ListName>();
        const sorted = (entries: Iterable<[string, string]>): string => JSON.stringify([...entries].sort());
        const held = (store: ListStore): string => sorted(store.storedRules().map((r) => [r.rule, r.list]));
        const inRedis = async (): Promise<string> =>
          sorted(
            Object.entries(await admin.hgetall(`${PREFIX}{lists}:rules`).catch(() => ({}))).map(([spelling, json]) => [
              spelling,
              (JSON.parse(json) as { list: string }).list,
            ]),
          );
        const expectModel = async (): Promise<void> => {
          const want = sorted(model);
          for (const store of stores) {
            await waitFor(() => held(store) === want, 15_000).catch(() => undefined);
            expect(held(store)).toBe(want);
          }
          await waitFor(async () => (await inRedis()) === want, 15_000).catch(() => undefined);
          expect(await inRedis()).toBe(want);
        };
        try {
          for (const next of steps) {
            switch (next.kind) {
              case 'put':
                await acknowledged(() =>
                  (stores[next.at] as ListStore).put({
                    rule: next.rule,
                    list: next.list,
                    createdAt: '2026-01-01T00:00:00.000Z',
                  }),
                );
                model.set(next.rule, next.list);
                break;
              case 'remove':
                await acknowledged(() => (stores[next.at] as ListStore).remove(next.rule));
                model.delete(next.rule);
                break;
              case 'restart-redis':
                await redis.restart();
                await expectModel();
                break;
              case 'restart-instance':
                await (stores[next.at] as ListStore).close();
                stores[next.at] = await open();
                await expectModel();
                break;
              case 'restart-all': {
                await Promise.all([redis.kill(), ...stores.map((store) => store.close())]);
                const [, one, two] = await Promise.all([redis.start(), open(), open()]);
                stores.splice(0, 2, one, two);
                await expectModel();
                break;
              }
            }
          }
          await expectModel();
        } finally {
          await Promise.all(stores.map((store) => store.close()));
          admin.disconnect();
          await redis.close();
        }
      }),
      {
        numRuns: 4,
        endOnFailure: true,
        // Always among the runs: a Redis that comes back empty, alone, then with every instance;
        // and a change sent to an emptied Redis before any instance had read it, after the file
        // had reached version 1 (the change started the versions again at 1, and the file, already
        // at 1, was never brought up to date: the next empty restart lost it).
        examples: [
          [
            false,
            [
              { kind: 'restart-instance', at: 1 },
              { kind: 'remove', at: 0, rule: '+33163000002' },
              { kind: 'restart-all' },
              { kind: 'put', at: 0, rule: '+33612000001', list: 'block' },
              { kind: 'restart-all' },
            ],
          ],
          [
            false,
            [
              { kind: 'put', at: 0, rule: '+33612000001', list: 'allow' },
              { kind: 'put', at: 1, rule: '+33164*', list: 'block' },
              { kind: 'restart-redis' },
              { kind: 'put', at: 1, rule: '+33163000001', list: 'block' },
              { kind: 'remove', at: 0, rule: '+33164*' },
              { kind: 'restart-all' },
            ],
          ],
        ],
      },
    );
  });
});
