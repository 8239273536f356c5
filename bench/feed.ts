// The blocklist feed's cost at FEED_MAX_ENTRIES=1000 (issue 30): serving it (the .vcf, the CSV,
// a Fritz!Box's PROPFIND Depth 1 and its REPORT addressbook-multiget of every card) must take
// under 20 ms, and neither serving nor rebuilding may block the event loop for more than 10 ms
// at a time. Run alone with `npx tsx bench/feed.ts`, or `npm run bench -- feed`.
//
// The server runs in this process on loopback, with its real routes, composition and feed; the
// client runs in a process of its own (node:http, pinned to the second core when taskset can),
// so the event-loop figures while serving are the server's own: with the client in a worker
// thread of this process, the client's collector took the server's turns on two cores.
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { createServiceDependencies } from '../src/composition.js';
import { loadNumberingPlan } from '../src/infra/arcep/load-numbering-plan.js';
import { InMemoryOperatorLists } from '../harness/operator-lists.js';
import { createRuleIndex, type RuleIndex } from '../src/domain/lists/rule-index.js';
import { createBlocklistFeed } from '../src/infra/blocklist/blocklist-feed.js';
import { createMemoryBlockedCallerLog } from '../src/infra/blocklist/memory-blocked-callers.js';
import { SLICE_BUDGET_MS } from '../src/infra/runtime/event-loop-slices.js';
import { scoredSources } from '../harness/scored-sources.js';
import { canPinCores, pinnedCommand } from './support/processes.js';
import { formatMs, formatNumber, type BenchSection } from './support/report.js';

const PASSWORD = 'bench feed password';
const AUTHORIZATION = `Basic ${Buffer.from(`blocklist:${PASSWORD}`).toString('base64')}`;
const ROUNDS = 200;
/**
 * Requests of each kind sent before the measured ones, so that the figures are a running
 * server's: a route's first requests run cold code, and 1-2 s into serving after the rebuilds one
 * turn held the loop for 20-60 ms of CPU whatever the route asked (no collection then; not again
 * after). With 20 it fell in the measured requests of the first kind, with 200 in the warm-up.
 */
const WARMUP_ROUNDS = 200;
/** Rebuilds before the measured ones. */
const WARMUP_REBUILDS = 20;
/** The core the client process is pinned to when taskset can (the server is not pinned: its collector may use both). */
const CLIENT_CORE = 1;

/** A request kind the client thread sends ROUNDS times in sequence (or `rounds`). */
interface RequestKind {
  rounds?: number;
  label: string;
  method: 'GET' | 'PROPFIND' | 'REPORT';
  path: string;
  body: string | undefined;
  depth: string | undefined;
}

/**
 * The client process: for each line on stdin (a kind, as JSON), sends it ROUNDS times in
 * sequence over one keep-alive connection (node:http) and writes a line with the latencies.
 */
const CLIENT_SOURCE = `
const http = require('node:http');
const { createInterface } = require('node:readline');
const [base, rounds, authorization] = process.argv.slice(1);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function send(kind) {
  return new Promise((resolve, reject) => {
    const headers = { authorization };
    if (kind.depth !== undefined) Object.assign(headers, { depth: kind.depth, 'content-type': 'text/xml' });
    const request = http.request(base + kind.path, { method: kind.method, headers, agent }, (answer) => {
      let bytes = 0;
      answer.on('data', (chunk) => { bytes += chunk.length; });
      answer.on('end', () => resolve({ status: answer.statusCode, bytes }));
    });
    request.on('error', reject);
    request.end(kind.body);
  });
}
createInterface({ input: process.stdin }).on('line', async (line) => {
  const kind = JSON.parse(line);
  const latencies = [];
  let bytes = 0;
  for (let round = 0; round < (kind.rounds ?? Number(rounds)); round += 1) {
    const start = performance.now();
    const answer = await send(kind);
    latencies.push(performance.now() - start);
    if (answer.status !== 200 && answer.status !== 207) {
      process.stdout.write(JSON.stringify({ error: kind.label + ': ' + answer.status }) + '\\n');
      return;
    }
    bytes = answer.bytes;
  }
  process.stdout.write(JSON.stringify({ latencies, bytes }) + '\\n');
});
`;

/** The client, in a process of its own (on the second core when taskset can pin it), so that neither its work nor its collector takes the server's turns. */
function startClient(base: string): {
  run(kind: RequestKind): Promise<{ latencies: number[]; bytes: number }>;
  close(): Promise<void>;
} {
  const { command, args } = pinnedCommand(CLIENT_CORE, process.execPath, [
    '-e',
    CLIENT_SOURCE,
    base,
    String(ROUNDS),
    AUTHORIZATION,
  ]);
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const waiting: Array<(line: string) => void> = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    run: (kind) =>
      new Promise((resolve, reject) => {
        child.once('error', reject);
        waiting.push((line) => {
          const message = JSON.parse(line) as { latencies?: number[]; bytes?: number; error?: string };
          if (message.error !== undefined) reject(new Error(message.error));
          else resolve({ latencies: message.latencies ?? [], bytes: message.bytes ?? 0 });
        });
        child.stdin.write(`${JSON.stringify(kind)}\n`);
      }),
    close: async () => {
      child.stdin.end();
      child.kill();
      await exited;
    },
  };
}

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? 0;
}

/** The longest stretch between two turns of the event loop, in the CPU time `read` counts (ms). */
function longestTurnProbe(read: () => NodeJS.CpuUsage): { stop(): number } {
  let last = read();
  let longest = 0;
  let on = true;
  const tick = (): void => {
    const now = read();
    longest = Math.max(longest, (now.user - last.user + now.system - last.system) / 1000);
    last = now;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    stop: () => {
      on = false;
      return longest;
    },
  };
}

/**
 * The longest stretch between two turns of the event loop in process CPU time: unlike the
 * loop-delay monitor, it leaves out the time the process waited for a core on a loaded machine
 * (it counts the other threads' CPU, e.g. the garbage collector's, so it is still an upper bound).
 */
const cpuBlockProbe = (): { stop(): number } => longestTurnProbe(() => process.cpuUsage());

/**
 * The longest stretch between two turns of the event loop in the CPU time of the loop's own
 * thread (process.threadCpuUsage): what the server's work held the loop for, without the time
 * the thread waited for a core on a loaded machine, nor the collector's helper threads running
 * beside it (a pause the collector makes the loop's thread wait for is counted).
 */
const threadBlockProbe = (): { stop(): number } => longestTurnProbe(() => process.threadCpuUsage());

/** Rebuilds after one rule changed, measured at each of these rule counts (issue 44). */
const SCALE_RULE_COUNTS = [10_000, 100_000];
const SCALE_REBUILDS = 10;
const SCALE_WARMUP_REBUILDS = 5;

/**
 * `count` rules as a store holds them (a RuleIndex): 60 % blocked numbers, 20 % blocked
 * ranges of a thousand numbers, 20 % allowed numbers inside those ranges (each range split).
 */
function rulesAtScale(count: number): RuleIndex {
  const index = createRuleIndex();
  const createdAt = '2026-01-01T00:00:00.000Z';
  for (let item = 0; item < count; item += 1) {
    const digits = String((item * 7919) % 100_000_000).padStart(8, '0');
    const kind = item % 5;
    if (kind < 3) index.set({ rule: `+336${digits}`, list: 'block', createdAt });
    else if (kind === 3)
      index.set({ rule: `+337${digits.slice(0, 5)}*`, list: 'block', label: `Plage ${item % 50}`, createdAt });
    else index.set({ rule: `+337${digits}`, list: 'allow', createdAt });
  }
  return index;
}

/** The feed's rebuild at `count` rules: each after one rule added, and a refresh with nothing changed. */
async function rebuildAtScale(count: number): Promise<BenchSection['rows']> {
  const index = rulesAtScale(count);
  const log = createMemoryBlockedCallerLog({ maxEntries: 1000, retentionMs: 30 * 86_400_000 });
  for (let item = 0; item < 1000; item += 1)
    log.record({
      e164: `+335${String(item * 7919).padStart(8, '0')}`,
      score: 8,
      reason: 'SPAM? 8/9',
      atMs: Date.now() - item,
    });
  const feed = createBlocklistFeed({
    log,
    lists: index,
    npvPrefixes: [],
    rule: { blockScore: 7, warnScore: 5, npv: 'warn', withheld: 'allow', callCentre: 'warn', outsideHours: 'block' },
    cidMaxLength: 30,
    maxEntries: 1000,
  });
  const started = performance.now();
  await feed.refresh();
  const firstMs = performance.now() - started;
  // Unmeasured rebuilds first, as at 1000 entries: the collection that building the rules here
  // set off ends during them, not during the measured ones.
  for (let round = 0; round < SCALE_WARMUP_REBUILDS; round += 1) {
    index.set({ rule: `+3368${String(round).padStart(8, '0')}`, list: 'block', createdAt: new Date().toISOString() });
    await feed.refresh();
  }
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const wallMs: number[] = [];
  const cpuBefore = process.cpuUsage();
  delay.enable();
  const probe = cpuBlockProbe();
  const threadProbe = threadBlockProbe();
  for (let round = 0; round < SCALE_REBUILDS; round += 1) {
    index.set({ rule: `+3369${String(round).padStart(8, '0')}`, list: 'block', createdAt: new Date().toISOString() });
    const start = performance.now();
    await feed.refresh();
    wallMs.push(performance.now() - start);
  }
  const cpuBlockMs = probe.stop();
  const threadBlockMs = threadProbe.stop();
  delay.disable();
  const cpu = process.cpuUsage(cpuBefore);
  const cpuMs = (cpu.user + cpu.system) / 1000 / SCALE_REBUILDS;
  const loopMs = delay.max / 1e6;
  // Nothing changed: the held snapshot stays, and nothing is rebuilt.
  const held = feed.snapshot();
  const idleStart = performance.now();
  const idle = await feed.refresh();
  const idleMs = performance.now() - idleStart;
  if (feed.failing() !== undefined) throw new Error(`the rebuild at ${count} rules failed`);
  const slowest = Math.max(...wallMs);
  const rules = formatNumber(count, 0);
  return [
    {
      label: `${rules} rules: rebuild after one rule added, slowest of ${SCALE_REBUILDS} (wall clock; first build ${formatMs(firstMs)})`,
      value: formatMs(slowest),
      target: '< 1 s',
      met: slowest < 1000,
    },
    { label: `${rules} rules: rebuild CPU time, mean of ${SCALE_REBUILDS}`, value: formatMs(cpuMs) },
    {
      label: `${rules} rules: longest event-loop block while rebuilding, in the loop thread's CPU time (wall clock / process CPU time)`,
      value: `${formatMs(threadBlockMs)} (${formatMs(loopMs)} / ${formatMs(cpuBlockMs)})`,
      target: '≤ 10 ms',
      met: threadBlockMs <= 10,
    },
    {
      label: `${rules} rules: refresh with nothing changed (${idle === held ? 'snapshot kept, no rebuild' : 'REBUILT'})`,
      value: formatMs(idleMs),
    },
  ];
}

export async function benchFeed(): Promise<BenchSection> {
  // 40 operator rules (some ranges with allowed numbers inside), the NPV ranges, and enough
  // numbers looked up here to fill the feed to its 1000 entries.
  const lists = new InMemoryOperatorLists();
  for (let index = 0; index < 30; index += 1)
    lists.add({ rule: `+3361${String(index).padStart(7, '0')}2`, list: 'block', label: `Règle ${index}` });
  for (let index = 0; index < 10; index += 1) lists.add({ rule: `+3317${index}*`, list: 'block', label: 'Plateforme' });
  lists.add({ rule: '+33170000001', list: 'allow' });
  const config = loadConfig({
    HASH_SECRET: 'bench-secret-0123456789',
    FEED_PASSWORD: PASSWORD,
    VERDICT_NPV: 'block',
    RATE_LIMIT_MAX: '0',
    LOG_LEVEL: 'silent',
  });
  const deps = await createServiceDependencies(config, undefined, {
    numberingPlan: loadNumberingPlan('data/arcep'),
    sources: scoredSources({}),
    operatorLists: lists,
    feedRefreshIntervalMs: 3_600_000,
  });
  const feed = deps.blocklistFeed;
  if (feed === undefined) throw new Error('the feed is on with FEED_PASSWORD');
  for (let index = 0; index < 1200; index += 1) {
    const score = 7 + (index % 3);
    feed.recordLookup(`+336${String(20_000_000 + index * 7919).slice(-8)}`, {
      isNPV: false,
      check: 'answered',
      sources: {
        primary: {
          score,
          searches: 1,
          commentsCount: 1,
          commentList: [
            { author: 'a', text: 't', date: '01/01/2026', callerType: index % 2 === 0 ? 'Démarchage' : 'Arnaque' },
          ],
        },
        community: {
          dangerPercent: null,
          visits: 0,
          commentsCount: 0,
          topCategory: '',
          lastCommentDate: '',
          commentList: [],
        },
        signals: { spamScore: null, reportsCount: 0, callerType: '', commentList: [] },
      },
    });
  }
  const app = await buildApp({ ...deps.app });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  const base = `http://127.0.0.1:${address.port}`;

  const delay = monitorEventLoopDelay({ resolution: 1 });
  try {
    // Rebuilds, timed one by one; each runs in slices (src/infra/runtime/event-loop-slices.ts) with the loop let through.
    const rebuildMs: number[] = [];
    // Warm-up: WARMUP_REBUILDS rebuilds not measured, so the figures are a running server's, not
    // those of code V8 is still compiling (the first rebuilds after start run cold code).
    for (let round = 0; round < WARMUP_REBUILDS; round += 1) {
      lists.add({ rule: `+3368${String(round).padStart(8, '0')}`, list: 'block', label: 'Échauffement' });
      await feed.refresh();
    }
    const rebuildCpuBefore = process.cpuUsage();
    delay.enable();
    const rebuildProbe = cpuBlockProbe();
    const rebuildThreadProbe = threadBlockProbe();
    for (let round = 0; round < 20; round += 1) {
      lists.add({ rule: `+3369${String(round).padStart(8, '0')}`, list: 'block', label: 'Nouvelle' });
      const start = performance.now();
      await feed.refresh();
      rebuildMs.push(performance.now() - start);
    }
    const rebuildCpuBlockMs = rebuildProbe.stop();
    const rebuildThreadBlockMs = rebuildThreadProbe.stop();
    delay.disable();
    const rebuildCpu = process.cpuUsage(rebuildCpuBefore);
    const rebuildCpuMs = (rebuildCpu.user + rebuildCpu.system) / 1000 / 20;
    const rebuildLoopMaxMs = delay.max / 1e6;
    delay.reset();
    const snapshot = feed.snapshot();
    const entries = snapshot.entries.length;
    const hrefs = snapshot.cards.map((card) => `/carddav/blocklist/${card.name}`);
    const multiget = `<?xml version="1.0"?><C:addressbook-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav"><D:prop><D:getetag/><C:address-data/></D:prop>${hrefs.map((href) => `<D:href>${href}</D:href>`).join('')}</C:addressbook-multiget>`;
    const propfind =
      '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/><D:resourcetype/></D:prop></D:propfind>';
    const kinds: RequestKind[] = [
      {
        label: 'GET /feed/blocklist.vcf',
        method: 'GET',
        path: '/feed/blocklist.vcf',
        body: undefined,
        depth: undefined,
      },
      {
        label: 'GET /feed/blocklist.csv',
        method: 'GET',
        path: '/feed/blocklist.csv',
        body: undefined,
        depth: undefined,
      },
      {
        label: 'PROPFIND Depth 1 (every card’s ETag)',
        method: 'PROPFIND',
        path: '/carddav/blocklist/',
        body: propfind,
        depth: '1',
      },
      {
        label: `REPORT addressbook-multiget (${hrefs.length} cards)`,
        method: 'REPORT',
        path: '/carddav/blocklist/',
        body: multiget,
        depth: '1',
      },
    ];
    const rows: BenchSection['rows'] = [];
    const servingLoop: string[] = [];
    let servingLoopMs = 0;
    let servingThreadBlockMs = 0;
    const client = startClient(base);
    try {
      for (const kind of kinds) await client.run({ ...kind, rounds: WARMUP_ROUNDS });
      for (const kind of kinds) {
        const cpuBefore = process.cpuUsage();
        delay.enable();
        const threadProbe = threadBlockProbe();
        const { latencies, bytes } = await client.run(kind);
        const threadBlockMs = threadProbe.stop();
        delay.disable();
        const cpu = process.cpuUsage(cpuBefore);
        const cpuMsPerRequest = (cpu.user + cpu.system) / 1000 / ROUNDS;
        servingLoopMs = Math.max(servingLoopMs, delay.max / 1e6);
        servingThreadBlockMs = Math.max(servingThreadBlockMs, threadBlockMs);
        servingLoop.push(`${kind.label} ${formatMs(threadBlockMs)} (wall clock ${formatMs(delay.max / 1e6)})`);
        delay.reset();
        latencies.sort((a, b) => a - b);
        const p99 = percentile(latencies, 0.99);
        rows.push({
          label: `${kind.label}: median / p99 (${formatNumber(bytes / 1024, 0)} KiB)`,
          value: `${formatMs(percentile(latencies, 0.5))} / ${formatMs(p99)}`,
          target: '< 20 ms',
          met: p99 < 20,
        });
        rows.push({
          label: `${kind.label}: CPU time per request, server`,
          value: formatMs(cpuMsPerRequest),
          target: '< 20 ms',
          met: cpuMsPerRequest < 20,
        });
      }
    } finally {
      await client.close();
    }
    const slowestRebuild = Math.max(...rebuildMs);
    rows.push({
      label: `rebuild of ${entries} entries (${snapshot.cards.length} cards), slowest of 20 (wall clock)`,
      value: formatMs(slowestRebuild),
      target: 'off the request path',
    });
    rows.push({
      label: `rebuild: CPU time, mean of 20 (run in slices of at most ${SLICE_BUDGET_MS} ms)`,
      value: formatMs(rebuildCpuMs),
    });
    rows.push({
      label: 'longest event-loop block while rebuilding, in the loop thread’s CPU time (wall clock)',
      value: `${formatMs(rebuildThreadBlockMs)} (${formatMs(rebuildLoopMaxMs)})`,
      target: '≤ 10 ms',
      met: rebuildThreadBlockMs <= 10,
    });
    rows.push({
      label:
        'longest event-loop block of the server while serving (the four kinds), in the loop thread’s CPU time (wall clock)',
      value: `${formatMs(servingThreadBlockMs)} (${formatMs(servingLoopMs)})`,
      target: '≤ 10 ms',
      met: servingThreadBlockMs <= 10,
    });
    rows.push({
      label: 'longest loop turn in process CPU time while rebuilding (every thread: GC helpers included)',
      value: formatMs(rebuildCpuBlockMs),
    });
    for (const count of SCALE_RULE_COUNTS) rows.push(...(await rebuildAtScale(count)));
    return {
      title: 'Blocklist feed at 1000 entries',
      rows,
      notes: [
        `${entries} entries in ${snapshot.cards.length} cards: 40 operator rules (ranges split around an allowed number), the NPV ranges (VERDICT_NPV=block), numbers looked up here.`,
        `${ROUNDS} sequential requests per kind over loopback (after ${WARMUP_ROUNDS} unmeasured ones of each kind), from a client in a process of its own (node:http, one keep-alive connection${canPinCores() ? `, pinned to core ${CLIENT_CORE} by taskset` : ', not pinned: taskset or a second core is missing'}); p99 is the 99th percentile. CPU time per request is the server process's.`,
        `Event-loop block, measured separately while rebuilding (20 rebuilds after ${WARMUP_REBUILDS} unmeasured ones, nothing served) and while serving: the target is on the longest stretch between two turns of the loop (a setImmediate probe) in the CPU time of the loop's own thread (process.threadCpuUsage), which counts what the server's work and the collector's pauses held the loop for, and not the time the thread waited for a core. In brackets, monitorEventLoopDelay at 1 ms resolution (wall clock: on a loaded machine it also counts that wait). The loop turn in process CPU time counts every thread of the process (the collector's helpers run beside the loop), so it is an upper bound with no target.`,
        `Longest event-loop block per kind while serving, in the loop thread's CPU time: ${servingLoop.join('; ')}.`,
        `At ${SCALE_RULE_COUNTS.map((count) => formatNumber(count, 0)).join(' and ')} rules (a RuleIndex, as the stores hold them): 60 % blocked numbers, 20 % blocked ranges, 20 % allowed numbers inside those ranges, and 1000 recorded callers; the feed capped at 1000 entries; ${SCALE_REBUILDS} rebuilds measured after ${SCALE_WARMUP_REBUILDS} unmeasured ones, each after one rule added. Every entry is decided by one look-up on the index (O(digits)); the rules are read in a few passes, each keeping only the next block rules in digit order the capped feed can take.`,
        'Serving writes held bytes: the files are made at rebuild, PROPFIND and REPORT answers are held per content version (a multiget of every card is one held buffer) and rendered again off the request path after a change.',
        `Shared 2-core machine: load average ${loadavg()
          .map((load) => load.toFixed(1))
          .join(
            ' / ',
          )} at the end of the run; wall-clock figures then measure the wait for a core more than the work, which the CPU-time rows show.`,
      ],
    };
  } finally {
    await app.close();
    await deps.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const section = await benchFeed();
  for (const row of section.rows)
    console.log(
      `${row.label}: ${row.value}${row.target ? ` (target ${row.target}${row.met === undefined ? '' : row.met ? ', met' : ', NOT met'})` : ''}`,
    );
  for (const note of section.notes ?? []) console.log(`- ${note}`);
}
