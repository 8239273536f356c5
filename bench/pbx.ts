// Benchmark of the call-setup delay the service adds to a PBX: SIP calls placed with SIPp through
// Kamailio running the shipped examples/kamailio/kamailio.cfg, against the built server and fake
// upstream sites on loopback, to a SIPp callee. SIPp measures each call from its INVITE to the
// final answer (200). Four flows:
//   baseline   the same config with the lookup taken out (no HTTP at all);
//   cached     the caller's verdict is in the service's front cache;
//   cold       a new caller each call, upstreams at fixture latency (UPSTREAM_LATENCY_MS);
//   wait=800   a new caller each call, upstreams slower than the wait (SLOW_UPSTREAM_MS);
//   hanging    no service at all but a loopback server that takes each request and never answers,
//              calls at HANGING_RATE a second, Kamailio's HTTP_TIMEOUT_S at HANGING_TIMEOUT_S.
// Targets: the cached verdict adds < 5 ms to call setup over the baseline, at the median; with
// the service hanging, every call's final answer within HTTP_TIMEOUT_S + 1 s.
// Run alone with `npx tsx bench/pbx.ts` (after `npm run build`).
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawnServer, type ServerProcess } from '../harness/servers.js';
import { startLoopbackServer } from '../harness/loopback.js';
import { KNOWN_NUMBER, startFakeUpstreamSites, type FakeUpstreamSites } from '../harness/upstream-sites.js';
import {
  KAMAILIO_CFG,
  placeCalls,
  sipSoftwareInstalled,
  startCallee,
  startKamailio,
  type Callee,
  type Kamailio,
} from '../harness/sip.js';

const UPSTREAM_LATENCY_MS = 120;
const SLOW_UPSTREAM_MS = 2000;
const WAIT_MS = 800;
const CACHED_CALLS = Number(process.env.BENCH_PBX_CALLS ?? 100);
const COLD_CALLS = Number(process.env.BENCH_PBX_COLD_CALLS ?? 20);
const WAIT_CALLS = Number(process.env.BENCH_PBX_WAIT_CALLS ?? 8);
const HANGING_CALLS = Number(process.env.BENCH_PBX_HANGING_CALLS ?? 20);
const HANGING_RATE = 5;
const HANGING_TIMEOUT_S = 2;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] ?? Number.NaN;
}

const ms = (value: number): string => `${value.toFixed(value < 10 ? 2 : 1)} ms`;

interface Rig {
  sites: FakeUpstreamSites;
  server: ServerProcess;
  kamailio: Kamailio;
}

async function startRig(delayMs: number, callee: Callee, cfg?: string): Promise<Rig> {
  // Every caller's tellows score is 3: Kamailio puts the call through, so the callee answers it.
  const sites = await startFakeUpstreamSites({
    delayMs,
    fallback: { ...KNOWN_NUMBER, tellowsApi: { fixture: 'api-single-object-lists.json' } },
  });
  const server = await spawnServer({
    ...sites.env(),
    TELLOWS_API_KEY: 'bench-partner-key',
    HASH_SECRET: 'bench-pbx-secret-0123456789',
    RATE_LIMIT_MAX: '0',
  });
  try {
    const kamailio = await startKamailio({
      serviceUrl: server.baseUrl,
      nextHopPort: callee.port,
      waitMs: WAIT_MS,
      httpTimeoutSeconds: 5,
      ...(cfg === undefined ? {} : { cfg }),
    });
    return { sites, server, kamailio };
  } catch (error) {
    server.child.kill('SIGTERM');
    await server.exited;
    await sites.close();
    throw error;
  }
}

async function stopRig(rig: Rig): Promise<void> {
  await rig.kamailio.stop();
  rig.server.child.kill('SIGTERM');
  await rig.server.exited;
  await rig.sites.close();
}

/** Setup times of `calls` answered calls, one SIPp run per caller (distinct callers are cold). */
async function callsFrom(kamailio: Kamailio, callers: string[]): Promise<number[]> {
  const times: number[] = [];
  for (const caller of callers) {
    const outcome = await placeCalls(kamailio.port, caller, 'answered', { timeoutSeconds: 30 });
    if (outcome.exitCode !== 0)
      throw new Error(`call from ${caller.slice(0, 4)}… failed:\n${outcome.output.slice(-1500)}`);
    times.push(...outcome.setupMs);
  }
  return times;
}

/** The shipped config with the screening taken out: the baseline call flow. */
function baselineConfig(dir: string): string {
  const text = readFileSync(KAMAILIO_CFG, 'utf8');
  // The new INVITE relayed in place of handing it to route[SCREEN] (transaction and 100 Trying kept).
  const without = text.replace(/\t\tif \(!async_task_route\("SCREEN"\)\) \{[\s\S]*?\n\t\t\}\n/, '\t\troute(RELAY);\n');
  if (without === text)
    throw new Error(
      'the shipped config no longer hands new INVITEs to route[SCREEN] with async_task_route as the baseline expects',
    );
  const path = join(dir, 'kamailio-baseline.cfg');
  writeFileSync(path, without);
  return path;
}

export async function benchPbx(): Promise<{ name: string; lines: string[] }> {
  if (!sipSoftwareInstalled())
    throw new Error('kamailio and sipp are not installed (scripts/test-prerequisites.sh installs them)');
  const dir = mkdtempSync(join(tmpdir(), 'bench-pbx-'));
  const callee = await startCallee();
  const lines: string[] = [];
  try {
    const baselineRig = await startRig(UPSTREAM_LATENCY_MS, callee, baselineConfig(dir));
    let baseline: number[];
    try {
      await callsFrom(baselineRig.kamailio, ['0611000000']);
      baseline = (
        await placeCalls(baselineRig.kamailio.port, '0611000001', 'answered', { calls: CACHED_CALLS, rate: 50 })
      ).setupMs;
    } finally {
      await stopRig(baselineRig);
    }

    const rig = await startRig(UPSTREAM_LATENCY_MS, callee);
    let cached: number[];
    let cold: number[];
    try {
      // Warm: the first call fills the caches; the measured ones are answered from the front cache.
      await callsFrom(rig.kamailio, ['0611000002']);
      const warm = await placeCalls(rig.kamailio.port, '0611000002', 'answered', { calls: CACHED_CALLS, rate: 50 });
      if (warm.exitCode !== 0) throw new Error(`cached calls failed:\n${warm.output.slice(-1500)}`);
      cached = warm.setupMs;
      cold = await callsFrom(
        rig.kamailio,
        Array.from({ length: COLD_CALLS }, (_, i) => `06110010${String(i).padStart(2, '0')}`),
      );
    } finally {
      await stopRig(rig);
    }

    const slowRig = await startRig(SLOW_UPSTREAM_MS, callee);
    let waited: number[];
    try {
      waited = await callsFrom(
        slowRig.kamailio,
        Array.from({ length: WAIT_CALLS }, (_, i) => `06110020${String(i).padStart(2, '0')}`),
      );
    } finally {
      await stopRig(slowRig);
    }

    // The service hanging: a loopback server that takes every request and never answers.
    const hangingService = await startLoopbackServer(() => undefined);
    let hanging: number[];
    try {
      const kamailio = await startKamailio({
        serviceUrl: hangingService.url,
        nextHopPort: callee.port,
        waitMs: WAIT_MS,
        httpTimeoutSeconds: HANGING_TIMEOUT_S,
      });
      try {
        const outcome = await placeCalls(kamailio.port, '0611003000', 'answered', {
          calls: HANGING_CALLS,
          rate: HANGING_RATE,
          limit: HANGING_CALLS,
          timeoutSeconds: 60,
        });
        if (outcome.exitCode !== 0)
          throw new Error(`calls with the service hanging failed:\n${outcome.output.slice(-1500)}`);
        hanging = outcome.setupMs;
      } finally {
        await kamailio.stop();
      }
    } finally {
      await hangingService.close();
    }

    const base = median(baseline);
    const row = (label: string, values: number[]): string =>
      `| ${label} | ${values.length} | ${ms(median(values))} | ${ms(percentile(values, 0.99))} | +${ms(median(values) - base)} | ${(median(values) / base).toFixed(2)}× |`;
    const added = median(cached) - base;
    lines.push(
      'INVITE to final answer (200) through Kamailio 5.6 with the shipped `examples/kamailio/kamailio.cfg`, SIPp caller and callee, the built server, fake upstream sites on loopback; times from the SIPp message log (microsecond timestamps of the first INVITE sent and the final answer received).',
      '',
      '| flow | calls | median | p99 | added over baseline (median) | ratio to baseline |',
      '|---|---|---|---|---|---|',
      row('baseline: no lookup', baseline),
      row('verdict cached (front cache)', cached),
      row(`cold, upstreams at ${UPSTREAM_LATENCY_MS} ms`, cold),
      row(`\`?wait=${WAIT_MS}\`, upstreams at ${SLOW_UPSTREAM_MS} ms`, waited),
      row(`service hanging, ${HANGING_RATE} calls/s, \`HTTP_TIMEOUT_S=${HANGING_TIMEOUT_S}\``, hanging),
      '',
      `Target: a cached verdict adds < 5 ms over the baseline at the median: ${added < 5 ? 'met' : 'MISSED'} (+${ms(added)}).`,
      `Target: with the service hanging, every call answered within HTTP_TIMEOUT_S + 1 s (${(HANGING_TIMEOUT_S + 1) * 1000} ms): ${hanging.length === HANGING_CALLS && Math.max(...hanging) < (HANGING_TIMEOUT_S + 1) * 1000 ? 'met' : 'MISSED'} (${hanging.length} of ${HANGING_CALLS} calls answered, slowest ${ms(Math.max(...hanging))}).`,
    );
    return { name: 'PBX: call-setup delay through Kamailio', lines };
  } finally {
    await callee.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await benchPbx();
  process.stdout.write(`${result.name}\n\n${result.lines.join('\n')}\n`);
}
