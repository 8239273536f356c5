// A write of record (a list change, a report) acknowledged only once a replica holds it, when the
// primary has replicas.
//
// Redis replicates asynchronously: the primary answers a write before any replica has it. If the
// primary dies then (SIGKILL, a lost machine), Sentinel promotes a replica that never saw the
// write, and a change the caller was told about is gone. So after such a write the stores ask
// `WAIT 1 <ms>`: the primary answers once one replica acknowledged everything this connection
// wrote, or after the deadline with 0. Zero replicas acknowledging while some are connected is a
// refusal (the store's 503, sent again by the client: every write of record is idempotent), never a
// silent success.
//
// Without replicas (one Redis, as compose.yaml's default) this costs nothing but an
// `INFO replication` per second: WAIT would otherwise block for its whole deadline and answer 0.
// The number of connected replicas is read there (INFO, not ROLE: ROLE is one of the
// `@dangerous` commands the narrow ACL user of docs/operations.md may not run) and kept
// REPLICA_COUNT_TTL_MS.
import type { Redis } from 'ioredis';

/** How long the number of connected replicas read by INFO is trusted. */
export const REPLICA_COUNT_TTL_MS = 1_000;

/** No replica acknowledged a write within the deadline although the primary has some connected. */
export class ReplicaCopyMissing extends Error {
  override name = 'ReplicaCopyMissing';
}

const known = new WeakMap<Redis, { replicas: number; readAtMs: number }>();

/** Replicas connected to the primary this connection talks to, as its `INFO replication` says (0 when it is no primary). */
async function connectedReplicas(redis: Redis, nowMs: number): Promise<number> {
  const cached = known.get(redis);
  if (cached !== undefined && nowMs - cached.readAtMs < REPLICA_COUNT_TTL_MS) return cached.replicas;
  const info = await redis.info('replication');
  const connected = /^connected_slaves:(\d+)\r?$/m.exec(info)?.[1];
  const replicas = /^role:master\r?$/m.test(info) && connected !== undefined ? Number(connected) : 0;
  known.set(redis, { replicas, readAtMs: nowMs });
  return replicas;
}

/**
 * The WAIT deadline: half the connection's own command timeout (ioredis' `commandTimeout`,
 * 4 × REDIS_COMMAND_TIMEOUT_MS), so a late replica is answered by Redis (0 replicas), not by a
 * client timeout; 500 ms when the connection has none.
 */
export function replicaWaitMs(redis: Redis): number {
  const commandTimeout = redis.options.commandTimeout;
  return commandTimeout === undefined ? 500 : Math.max(1, Math.floor(commandTimeout / 2));
}

/**
 * After a write of record on `redis`: resolves with the replicas that acknowledged it (0 when
 * the primary has none connected, without waiting). Rejects with ReplicaCopyMissing when replicas
 * are connected and none acknowledged within `replicaWaitMs`, or with the command's error.
 */
export async function awaitReplicaCopy(redis: Redis, nowMs = Date.now()): Promise<number> {
  if ((await connectedReplicas(redis, nowMs)) === 0) return 0;
  const waitMs = replicaWaitMs(redis);
  const acknowledged = Number(await redis.call('WAIT', '1', String(waitMs)));
  if (acknowledged >= 1) return acknowledged;
  // Perhaps the replicas just left: read INFO again next time.
  known.delete(redis);
  throw new ReplicaCopyMissing(`no Redis replica acknowledged the write within ${waitMs} ms`);
}
