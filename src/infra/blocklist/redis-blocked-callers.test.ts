import { describe, expect, it } from 'vitest';
import { useRedisTestClients, waitFor } from '../../../test/support/redis.js';
import { createRedisBlockedCallerLog } from './redis-blocked-callers.js';

const { prefix, admin, readyClient } = useRedisTestClients('blocked-callers');
const DAY = 86_400_000;
const NOW = Date.parse('2026-11-01T12:00:00Z');
const caller = (e164: string, atMs: number, score = 8) => ({ e164, score, reason: `SPAM? ${score}/9`, atMs });

describe('Redis blocked-callers record', () => {
  it('is shared by every instance, newest first, bounded, and forgets what is past the retention', async () => {
    const options = { maxEntries: 3, retentionMs: 30 * DAY };
    const first = createRedisBlockedCallerLog({ client: await readyClient(), ...options });
    const second = createRedisBlockedCallerLog({ client: await readyClient(), ...options });
    first.record(caller('+33600000001', NOW - 31 * DAY));
    for (let index = 2; index <= 6; index += 1)
      first.record(caller(`+3360000000${index}`, NOW - (10 - index) * 1000, index));
    // Recording does not wait on Redis; the other instance sees the writes once they land.
    await waitFor(
      async () =>
        (await second.list(NOW)).map((entry) => entry.e164).join() === '+33600000006,+33600000005,+33600000004',
    );
    const listed = await second.list(NOW);
    expect(listed[0]).toEqual(caller('+33600000006', NOW - 4000, 6));
    // Each number's details expire with the retention on their own.
    const ttl = await admin.pttl(`${prefix}{blocked}:caller:+33600000006`);
    expect(ttl).toBeGreaterThan(29 * DAY);
    expect(ttl).toBeLessThanOrEqual(30 * DAY);
  });

  it('forgets a number on every instance: its member and its details (an allowed number is kept nowhere)', async () => {
    const options = { maxEntries: 10, retentionMs: 30 * DAY };
    const first = createRedisBlockedCallerLog({ client: await readyClient(), ...options });
    const second = createRedisBlockedCallerLog({ client: await readyClient(), ...options });
    // Numbers of their own: the record is shared with the test above.
    first.record(caller('+33610000001', NOW - 2000));
    first.record(caller('+33610000002', NOW - 1000));
    const numbers = async (): Promise<string[]> =>
      (await first.list(NOW)).map((entry) => entry.e164).filter((e164) => e164.startsWith('+3361'));
    await waitFor(async () => (await second.list(NOW)).filter((entry) => entry.e164.startsWith('+3361')).length === 2);
    second.forget('+33610000001');
    await waitFor(async () => (await numbers()).join() === '+33610000002');
    expect(await admin.exists(`${prefix}{blocked}:caller:+33610000001`)).toBe(0);
    expect(await admin.zscore(`${prefix}{blocked}:log`, '+33610000001')).toBeNull();
  });
});
