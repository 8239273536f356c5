import { describe, expect, it } from 'vitest';
import {
  assessUpstream,
  createReadinessCheck,
  createUpstreamOutcomeTracker,
  type ReadinessProbes,
  type UpstreamProbe,
} from './readiness.js';

const NOW = Date.parse('2026-11-22T03:00:00.000Z');

function upstream(name: string, slot: UpstreamProbe['slot'], overrides: Partial<UpstreamProbe> = {}): UpstreamProbe {
  return {
    name,
    slot,
    circuit: () => 'closed',
    pausedUntilMs: () => 0,
    lastOutcome: () => ({ status: 'ok', atMs: NOW - 1000 }),
    ...overrides,
  };
}

function probes(overrides: Partial<ReadinessProbes> = {}): ReadinessProbes {
  return {
    upstreams: [
      upstream('tellows', 'primary'),
      upstream('numeroinconnu', 'community'),
      upstream('telguarder', 'signals'),
    ],
    numberingDataDate: () => '2026-10-31',
    isShuttingDown: () => false,
    ...overrides,
  };
}

const check = (p: ReadinessProbes) => createReadinessCheck(p, { now: () => NOW });

describe('readiness', () => {
  it('is ok when every upstream, Redis and the numbering data are fine', async () => {
    const report = await check(probes({ redisStatus: () => 'ok' })).evaluate();
    expect(report.status).toBe('ok');
    expect(report.dependencies.upstreams.tellows).toEqual({
      status: 'ok',
      slot: 'primary',
      circuit: 'closed',
      pausedUntil: null,
      lastOutcome: { status: 'ok', at: '2026-11-22T02:59:59.000Z' },
      lastFailure: null,
    });
    expect(report.dependencies.numberingData).toEqual({ status: 'ok', dataDate: '2026-10-31', ageDays: 22 });
    expect(report.dependencies.redis).toEqual({ status: 'ok' });
  });

  it('marks an upstream degraded with the reason "layout changed" while the canary finds a required marker missing', async () => {
    const changed = upstream('telguarder', 'signals', { layoutChanged: () => true });
    const report = await check(probes({ upstreams: [upstream('tellows', 'primary'), changed] })).evaluate();
    expect(report.status).toBe('degraded');
    expect(report.dependencies.upstreams.telguarder).toMatchObject({ status: 'degraded', reason: 'layout changed' });
    expect(report.dependencies.upstreams.tellows).not.toHaveProperty('reason');
  });

  it('keeps a paused upstream down when its layout also changed', async () => {
    const both = upstream('telguarder', 'signals', { layoutChanged: () => true, pausedUntilMs: () => NOW + 60_000 });
    const report = await check(probes({ upstreams: [both] })).evaluate();
    expect(report.dependencies.upstreams.telguarder).toMatchObject({ status: 'down', reason: 'layout changed' });
  });

  it('marks a paused upstream down and the service degraded, not down', async () => {
    const paused = upstream('numeroinconnu', 'community', {
      pausedUntilMs: () => NOW + 300_000,
      lastOutcome: () => ({ status: 'blocked', reason: 'http_429', atMs: NOW - 5000 }),
    });
    const report = await check(probes({ upstreams: [upstream('tellows', 'primary'), paused] })).evaluate();
    expect(report.status).toBe('degraded');
    expect(report.dependencies.upstreams.numeroinconnu).toMatchObject({
      status: 'down',
      pausedUntil: '2026-11-22T03:05:00.000Z',
      lastOutcome: { status: 'blocked', reason: 'http_429' },
    });
    expect(report.dependencies.upstreams.tellows?.status).toBe('ok');
  });

  it('marks an open circuit down, a half-open one or a failed last fetch degraded', async () => {
    const report = await check(
      probes({
        upstreams: [
          upstream('tellows', 'primary', { circuit: () => 'open' }),
          upstream('numeroinconnu', 'community', { circuit: () => 'half_open' }),
          upstream('telguarder', 'signals', { lastOutcome: () => ({ status: 'error', reason: 'timeout', atMs: NOW }) }),
        ],
      }),
    ).evaluate();
    expect(report.status).toBe('degraded');
    expect(Object.values(report.dependencies.upstreams).map((u) => u.status)).toEqual(['down', 'degraded', 'degraded']);
  });

  it('stays degraded (200) when Redis is down, a probe that throws or hangs counts as down', async () => {
    expect((await check(probes({ redisStatus: () => 'down' })).evaluate()).dependencies.redis).toEqual({
      status: 'down',
    });
    const throwing = await check(probes({ redisStatus: () => Promise.reject(new Error('ECONNREFUSED')) })).evaluate();
    expect(throwing.status).toBe('degraded');
    expect(throwing.dependencies.redis).toEqual({ status: 'down' });
    const hanging = createReadinessCheck(probes({ redisStatus: () => new Promise(() => {}) }), {
      now: () => NOW,
      redisTimeoutMs: 20,
    });
    expect((await hanging.evaluate()).dependencies.redis).toEqual({ status: 'down' });
  });

  it('omits Redis when it is not configured', async () => {
    expect((await check(probes()).evaluate()).dependencies.redis).toBeUndefined();
  });

  it('is down only when the service cannot answer: shutting down, or no numbering data', async () => {
    expect(await check(probes({ isShuttingDown: () => true })).evaluate()).toMatchObject({
      status: 'down',
      reason: 'shutting down',
    });
    const missing = await check(probes({ numberingDataDate: () => undefined })).evaluate();
    expect(missing).toMatchObject({ status: 'down', reason: 'numbering data missing' });
    expect(missing.dependencies.numberingData).toEqual({ status: 'down', dataDate: null, ageDays: null });
  });

  it('calls old numbering data degraded', async () => {
    const report = await check(probes({ numberingDataDate: () => '2025-01-01' })).evaluate();
    expect(report.status).toBe('degraded');
    expect(report.dependencies.numberingData?.status).toBe('degraded');
  });

  it('shares one evaluation among concurrent callers, and evaluates afresh afterwards', async () => {
    let redisCalls = 0;
    let release: (() => void) | undefined;
    const readiness = check(
      probes({
        redisStatus: () => {
          redisCalls += 1;
          return new Promise((resolve) => {
            release = () => resolve('ok');
          });
        },
      }),
    );
    const pending = Array.from({ length: 20 }, () => readiness.evaluate());
    await new Promise((resolve) => setImmediate(resolve));
    release?.();
    const reports = await Promise.all(pending);
    expect(redisCalls).toBe(1);
    expect(new Set(reports).size).toBe(1);
    const later = readiness.evaluate();
    await new Promise((resolve) => setImmediate(resolve));
    release?.();
    await later;
    expect(redisCalls).toBe(2);
  });
});

describe('the upstream outcome tracker', () => {
  it('remembers real fetches only, not cache answers or our own cancellations', () => {
    const tracker = createUpstreamOutcomeTracker(() => NOW);
    tracker.record({ slot: 'primary', status: 'error', reason: 'http_5xx', cause: 'http_503', cache: 'miss' });
    tracker.record({ slot: 'primary', status: 'ok', cache: 'hit' });
    tracker.record({ slot: 'primary', status: 'error', reason: 'aborted', cache: 'miss' });
    expect(tracker.lastOutcome('primary')).toEqual({
      status: 'error',
      reason: 'http_5xx',
      cause: 'http_503',
      atMs: NOW,
    });
    expect(tracker.lastOutcome('signals')).toBeUndefined();
  });

  it('keeps the last failure and its cause after a later success', () => {
    const tracker = createUpstreamOutcomeTracker(() => NOW);
    tracker.record({ slot: 'community', status: 'error', reason: 'connection', cause: 'refused', cache: 'miss' });
    tracker.record({ slot: 'community', status: 'ok', cache: 'miss' });
    expect(tracker.lastOutcome('community')).toEqual({ status: 'ok', atMs: NOW });
    const refused = { status: 'error', reason: 'connection', cause: 'refused' };
    expect(tracker.lastFailure('community')).toEqual({ ...refused, atMs: NOW });
    // Without a finer cause, the reason's own.
    tracker.record({ slot: 'signals', status: 'blocked', reason: 'http_403', cache: 'miss' });
    expect(tracker.lastFailure('signals')).toEqual({
      status: 'blocked',
      reason: 'http_403',
      cause: 'blocked',
      atMs: NOW,
    });
    const assessed = assessUpstream(
      {
        name: 'numeroinconnu',
        slot: 'community',
        lastOutcome: () => tracker.lastOutcome('community'),
        lastFailure: () => tracker.lastFailure('community'),
      },
      NOW,
    );
    expect(assessed.lastFailure).toEqual({ ...refused, at: new Date(NOW).toISOString() });
    expect(assessed.status).toBe('ok');
  });
});
