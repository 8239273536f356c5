// A write of record acknowledged once a replica holds it (replica-copy.ts), against real Redis
// servers of the test's own: a primary alone (nothing waited for), a primary with a replica (the
// write is on the replica when the call returns), and a frozen replica (SIGSTOP: still connected,
// acknowledging nothing), which is a refusal.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awaitReplicaCopy, ReplicaCopyMissing } from './replica-copy.js';
import { startOwnRedis, type OwnRedis } from '../../../test/support/redis-server.js';
import { waitFor } from '../../../test/support/redis.js';

const owned: OwnRedis[] = [];
const connections: Redis[] = [];

function connect(server: OwnRedis, commandTimeout?: number): Redis {
  const redis = new Redis(server.url, { maxRetriesPerRequest: 0, ...(commandTimeout ? { commandTimeout } : {}) });
  connections.push(redis);
  return redis;
}

function commandsOf(redis: Redis): string[] {
  const names: string[] = [];
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command, stream) => {
    names.push(command.name.toLowerCase());
    return send(command, stream);
  };
  return names;
}

afterAll(async () => {
  for (const redis of connections) redis.disconnect();
  await Promise.all(owned.map((server) => server.close()));
});

describe('awaitReplicaCopy', () => {
  it('answers 0 at once on a primary without replicas, asking INFO replication once per second and never WAIT', async () => {
    const alone = await startOwnRedis({ persistent: false });
    owned.push(alone);
    const redis = connect(alone);
    await redis.ping();
    const sent = commandsOf(redis);
    await redis.set('k', 'v');
    expect(await awaitReplicaCopy(redis, 1_000)).toBe(0);
    expect(await awaitReplicaCopy(redis, 1_500)).toBe(0);
    expect(sent).toEqual(['set', 'info']);
    expect(await awaitReplicaCopy(redis, 2_000)).toBe(0);
    expect(sent).toEqual(['set', 'info', 'info']);
  });

  describe('on a primary with a replica', () => {
    let primary: OwnRedis;
    let replica: OwnRedis;
    beforeAll(async () => {
      primary = await startOwnRedis({ persistent: false });
      owned.push(primary);
      replica = await startOwnRedis({ persistent: false, replicaOf: primary.port });
      owned.push(replica);
      const onReplica = connect(replica);
      await waitFor(async () => /master_link_status:up/.test(await onReplica.info('replication')), 10_000);
    });

    it('resolves once the replica holds the write', async () => {
      const redis = connect(primary);
      const onReplica = connect(replica);
      for (let at = 0; at < 20; at += 1) {
        await redis.set(`written:${at}`, String(at));
        expect(await awaitReplicaCopy(redis)).toBe(1);
        // Read on the replica right after: the write is there, not on its way.
        expect(await onReplica.get(`written:${at}`)).toBe(String(at));
      }
    });

    it('refuses (ReplicaCopyMissing) when the replica acknowledges nothing within half the command timeout', async () => {
      const redis = connect(primary, 400);
      await redis.set('before-freeze', '1');
      expect(await awaitReplicaCopy(redis)).toBe(1);
      replica.signal('SIGSTOP');
      try {
        await redis.set('frozen', '1');
        // WAIT's own deadline (200 ms) answers 0, before the client's timeout (400 ms) would fail the command.
        await expect(awaitReplicaCopy(redis)).rejects.toBeInstanceOf(ReplicaCopyMissing);
      } finally {
        replica.signal('SIGCONT');
      }
      await redis.set('after-thaw', '1');
      expect(await awaitReplicaCopy(redis)).toBe(1);
    });
  });
});
