// Readiness (`/health/ready`): what each dependency looks like now – every upstream (its last
// real outcome, its pause and its breaker), Redis when configured, the ARCEP data's date – each
// `ok`, `degraded` or `down`, and an overall status.
//
// Readiness only reads state the service already keeps; it never calls an upstream (that
// would spend the budgets it reports on). Only `down` overall – the service cannot answer at
// all: shutting down, or no numbering data – turns into a 503: a dead upstream still leaves
// the other sources and the cache, so the instance stays in rotation, `degraded`.
import type { SourceSlot } from '../../domain/report.js';
import type { BreakerState } from '../../domain/lookup/resilience.js';
import { causeOf, type FailureCause, type FailureReason, type SourceStatus } from '../../domain/ports/source.js';

export type DependencyStatus = 'ok' | 'degraded' | 'down';
export type { BreakerState };

export interface LastOutcome {
  status: SourceStatus;
  reason?: FailureReason;
  /** With a reason: what the failure was (causeOf). */
  cause?: FailureCause;
  atMs: number;
}

/** The last fetch that failed (`error` or `blocked`), kept after later successes: why the source failed last. */
export interface LastFailure {
  status: 'error' | 'blocked';
  reason: FailureReason;
  cause: FailureCause;
  atMs: number;
}

export interface UpstreamProbe {
  /** The source's upstream name (`tellows`, `numeroinconnu`, `telguarder`). */
  name: string;
  slot: SourceSlot;
  /** The slot's breaker state, when the engine has one. */
  circuit?: () => BreakerState;
  /** Epoch ms until which every fetcher of this source is paused, or 0. */
  pausedUntilMs?: () => number;
  /** The last outcome of a real fetch (not a cache answer), if any yet. */
  lastOutcome?: () => LastOutcome | undefined;
  /** The last real fetch that failed, if any yet. */
  lastFailure?: () => LastFailure | undefined;
  /** True while the scheduled canary finds a required marker missing from the upstream's pages. */
  layoutChanged?: () => boolean;
}

export type RedisStatus = 'ok' | 'degraded' | 'down';

export interface ReadinessProbes {
  upstreams: readonly UpstreamProbe[];
  /** The ARCEP data's date (YYYY-MM-DD); undefined when the data is missing. Absent: not checked. */
  numberingDataDate?: () => string | undefined;
  /** Present only when Redis is configured. */
  redisStatus?: () => RedisStatus | Promise<RedisStatus>;
  isShuttingDown?: () => boolean;
}

export interface ReadinessOptions {
  now?: () => number;
  /** ARCEP data older than this is `degraded` (still used; `phone-rep data update` refreshes it). Default 120 (ARCEP_MAX_AGE_DAYS). */
  numberingMaxAgeDays?: number;
  /** A Redis probe slower than this counts as `down`. Default 1000 ms. */
  redisTimeoutMs?: number;
}

export interface UpstreamReadiness {
  status: DependencyStatus;
  slot: SourceSlot;
  circuit: BreakerState | null;
  pausedUntil: string | null;
  lastOutcome: { status: SourceStatus; reason?: FailureReason; cause?: FailureCause; at: string } | null;
  /** The last real fetch that failed and its cause class, kept after the source answers again; null when none has. */
  lastFailure: { status: 'error' | 'blocked'; reason: FailureReason; cause: FailureCause; at: string } | null;
  /** Why the upstream is not `ok`, when a probe says so (`layout changed`). */
  reason?: string;
}

export interface ReadinessReport {
  status: DependencyStatus;
  timestamp: string;
  /** Why the service cannot answer, when status is `down`. */
  reason?: string;
  dependencies: {
    upstreams: Record<string, UpstreamReadiness>;
    numberingData?: NumberingDataReadiness;
    redis?: { status: DependencyStatus };
  };
}

export interface NumberingDataReadiness {
  status: DependencyStatus;
  dataDate: string | null;
  ageDays: number | null;
}

export interface ReadinessCheck {
  /** Concurrent callers share one evaluation. Never rejects. */
  evaluate(): Promise<ReadinessReport>;
}

const DAY_MS = 86_400_000;

export function assessUpstream(probe: UpstreamProbe, nowMs: number): UpstreamReadiness {
  const circuit = probe.circuit?.() ?? null;
  const pausedUntilMs = probe.pausedUntilMs?.() ?? 0;
  const paused = pausedUntilMs > nowMs;
  const last = probe.lastOutcome?.();
  const lastFailure = probe.lastFailure?.();
  let status: DependencyStatus = 'ok';
  // Paused or open: the upstream will not be asked for now; lookups get its cached copies only.
  if (paused || circuit === 'open') status = 'down';
  else if (circuit === 'half_open' || (last !== undefined && (last.status === 'error' || last.status === 'blocked')))
    status = 'degraded';
  // The site still answers, but its pages lack what the parser needs: answers will be empty.
  const layoutChanged = probe.layoutChanged?.() === true;
  if (layoutChanged && status === 'ok') status = 'degraded';
  return {
    status,
    ...(layoutChanged ? { reason: 'layout changed' } : {}),
    slot: probe.slot,
    circuit,
    pausedUntil: paused ? new Date(pausedUntilMs).toISOString() : null,
    lastOutcome:
      last === undefined
        ? null
        : {
            status: last.status,
            ...(last.reason === undefined
              ? {}
              : { reason: last.reason, cause: last.cause ?? causeOf({ reason: last.reason }) }),
            at: new Date(last.atMs).toISOString(),
          },
    lastFailure:
      lastFailure === undefined
        ? null
        : {
            status: lastFailure.status,
            reason: lastFailure.reason,
            cause: lastFailure.cause,
            at: new Date(lastFailure.atMs).toISOString(),
          },
  };
}

export function assessNumberingData(
  dataDate: string | undefined,
  nowMs: number,
  maxAgeDays: number,
): NumberingDataReadiness {
  if (dataDate === undefined) return { status: 'down', dataDate: null, ageDays: null };
  const dateMs = Date.parse(`${dataDate}T00:00:00Z`);
  if (Number.isNaN(dateMs)) return { status: 'degraded', dataDate, ageDays: null };
  const ageDays = Math.max(0, Math.floor((nowMs - dateMs) / DAY_MS));
  return { status: ageDays > maxAgeDays ? 'degraded' : 'ok', dataDate, ageDays };
}

async function probeRedis(
  probe: NonNullable<ReadinessProbes['redisStatus']>,
  timeoutMs: number,
): Promise<DependencyStatus> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<DependencyStatus>((resolve) => {
      timer = setTimeout(() => resolve('down'), timeoutMs);
    });
    return await Promise.race([Promise.resolve().then(probe), timeout]);
  } catch {
    return 'down';
  } finally {
    clearTimeout(timer);
  }
}

export function createReadinessCheck(probes: ReadinessProbes, options: ReadinessOptions = {}): ReadinessCheck {
  const now = options.now ?? Date.now;
  const maxAgeDays = options.numberingMaxAgeDays ?? 120;
  const redisTimeoutMs = options.redisTimeoutMs ?? 1000;
  let inflight: Promise<ReadinessReport> | undefined;

  async function run(): Promise<ReadinessReport> {
    const redis =
      probes.redisStatus === undefined ? undefined : { status: await probeRedis(probes.redisStatus, redisTimeoutMs) };
    const nowMs = now();
    const upstreams: Record<string, UpstreamReadiness> = {};
    for (const probe of probes.upstreams) {
      try {
        upstreams[probe.name] = assessUpstream(probe, nowMs);
      } catch {
        const unknown = { circuit: null, pausedUntil: null, lastOutcome: null, lastFailure: null };
        upstreams[probe.name] = { status: 'degraded', slot: probe.slot, ...unknown };
      }
    }
    const numberingData =
      probes.numberingDataDate === undefined
        ? undefined
        : assessNumberingData(probes.numberingDataDate(), nowMs, maxAgeDays);
    const dependencies: ReadinessReport['dependencies'] = {
      upstreams,
      ...(numberingData === undefined ? {} : { numberingData }),
      ...(redis === undefined ? {} : { redis }),
    };

    let status: DependencyStatus;
    let reason: string | undefined;
    if (probes.isShuttingDown?.() === true) {
      status = 'down';
      reason = 'shutting down';
    } else if (numberingData?.status === 'down') {
      status = 'down';
      reason = 'numbering data missing';
    } else {
      const statuses = [
        ...Object.values(upstreams).map((u) => u.status),
        ...(numberingData === undefined ? [] : [numberingData.status]),
        ...(redis === undefined ? [] : [redis.status]),
      ];
      status = statuses.every((s) => s === 'ok') ? 'ok' : 'degraded';
    }
    return {
      status,
      timestamp: new Date(nowMs).toISOString(),
      ...(reason === undefined ? {} : { reason }),
      dependencies,
    };
  }

  return {
    evaluate() {
      inflight ??= run().finally(() => {
        inflight = undefined;
      });
      return inflight;
    },
  };
}

/** Remembers each source's last real fetch outcome and last failure (cache answers say nothing about the upstream). */
export interface UpstreamOutcomeTracker {
  record(event: {
    slot: SourceSlot;
    status: SourceStatus;
    reason?: FailureReason;
    cause?: FailureCause;
    cache: string;
  }): void;
  lastOutcome(slot: SourceSlot): LastOutcome | undefined;
  lastFailure(slot: SourceSlot): LastFailure | undefined;
  /** Epoch ms of the first failure of the failures in a row the source is in now (its last real fetch failed), else undefined. */
  failingSince(slot: SourceSlot): number | undefined;
}

export function createUpstreamOutcomeTracker(now: () => number = Date.now): UpstreamOutcomeTracker {
  const last = new Map<SourceSlot, LastOutcome>();
  const failures = new Map<SourceSlot, LastFailure>();
  const failingSince = new Map<SourceSlot, number>();
  return {
    record(event) {
      if (event.cache !== 'miss' || event.reason === 'aborted') return;
      const atMs = now();
      const cause = event.reason === undefined ? undefined : (event.cause ?? causeOf({ reason: event.reason }));
      const { slot, status, reason } = event;
      last.set(slot, { status, ...(reason === undefined || cause === undefined ? {} : { reason, cause }), atMs });
      if ((status === 'error' || status === 'blocked') && reason !== undefined && cause !== undefined) {
        failures.set(slot, { status, reason, cause, atMs });
        if (!failingSince.has(slot)) failingSince.set(slot, atMs);
      } else if (status !== 'error' && status !== 'blocked') failingSince.delete(slot);
    },
    failingSince: (slot) => failingSince.get(slot),
    lastOutcome: (slot) => last.get(slot),
    lastFailure: (slot) => failures.get(slot),
  };
}
