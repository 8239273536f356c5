// `npm run bench -- reports`: the reporters' reports (docs/reports.md).
// - The CPU of a report: the built server (file store, a token made by the real token store
//   before start) takes N `POST /api/report` of distinct numbers over keep-alive connections;
//   its process tree's CPU (utime + stime from /proc) before and after, divided by N (bound: 1 ms).
//   Beside it, in process: the report store's `record()` alone, and the two things it does per
//   vote that cost most (the lists' lock taken and released; one line appended and fsynced).
// - The cached `/verdict` of the built server with an empty report store and with 100,000
//   reported numbers (2 spam votes each, from two tokens), the two servers side by side, rounds
//   interleaved, same load generator: the reports must not slow it. A reported number's
//   `/verdict` as an extra row. The memory of 100,000 reported numbers: the two servers' RSS
//   after start and the same warm-up.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadNumberingPlan } from '../src/infra/arcep/load-numbering-plan.js';
import { createPhoneNumberParser } from '../src/domain/numbering/parse-phone-number.js';
import { takeLock, writeFileAtomically } from '../src/infra/lists/file-list-store.js';
import { openFileReportStore, voteLine } from '../src/infra/reports/file-report-store.js';
import { openTokenStore } from '../src/infra/reports/token-store.js';
import type { ReportSettings } from '../src/infra/reports/report-store.js';
import { startFixtureUpstreams } from '../harness/upstream-sites.js';
import {
  closedLoopGenerator,
  cpuSecondsOfTree,
  findFreePort,
  runLoad,
  runPairedLoad,
  startBuiltServer,
  waitUntilAnswering,
  type RunningProcess,
} from './support/processes.js';
import { formatNumber, formatPercent, type BenchRow, type BenchSection } from './support/report.js';

/** Reports sent to the server, measured (after WARM_REPORTS unmeasured ones). */
const REPORTS = 5_000;
const WARM_REPORTS = 500;
/** Keep-alive connections the reports are sent over. */
const REPORT_CONNECTIONS = 8;
/** `record()` calls in process, and lock / append rounds of its breakdown. */
const RECORDS = 2_000;
const REPORTED = 100_000;
const ROUNDS = 5;
const ROUND_SECONDS = 4;
const WARM_SECONDS = 3;
/** The benched number (reported on neither server) and the settings of the in-process store. */
const NUMBER = '0612345678';
const SETTINGS: ReportSettings = { halfLifeDays: 125, minReporters: 2, retentionDays: 180, maxPerTokenDay: 1_000_000 };
const TARGET_US = 1000;

/**
 * `count` distinct 06 numbers in E.164 the parser accepts, from `06<from>` on, none of them
 * NUMBER (the ranges used, 062, 065 and 068, are assigned: nearly every number is accepted).
 */
function distinctNumbers(parse: ReturnType<typeof createPhoneNumberParser>, count: number, from: number): string[] {
  const numbers: string[] = [];
  const benched = parse(NUMBER);
  for (let n = from; numbers.length < count; n += 1) {
    if (n - from > 2 * count) throw new Error(`too few numbers accepted from 06${from} on`);
    const parsed = parse(`06${String(n).padStart(8, '0')}`);
    if (parsed.ok && (!benched.ok || parsed.value.e164 !== benched.value.e164)) numbers.push(parsed.value.e164);
  }
  return numbers;
}

async function rssOf(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^process_resident_memory_bytes (\d+)/m.exec(text)?.[1] ?? Number.NaN);
}

async function reportsCounted(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let total = 0;
  for (const match of text.matchAll(/^phone_rep_reports_total\{[^}]*\} (\d+)/gm)) total += Number(match[1]);
  return total;
}

/** POSTs one report per number over `connections` keep-alive connections; throws on any answer but 200. */
async function sendReports(
  base: string,
  secret: string,
  numbers: readonly string[],
  connections: number,
): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const url = new URL('/api/report', base);
  let next = 0;
  const post = (phone: string): Promise<number> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ phone, rating: 'fraud' });
      const req = request(
        url,
        {
          agent,
          method: 'POST',
          headers: {
            authorization: `Bearer ${secret}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.once('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.once('error', reject);
      req.end(body);
    });
  try {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next < numbers.length) {
          const phone = numbers[next] ?? '';
          next += 1;
          const status = await post(phone);
          if (status !== 200) throw new Error(`POST /api/report answered ${status}`);
        }
      }),
    );
  } finally {
    agent.destroy();
  }
}

/** This process's CPU (user + system) in µs per call of `run`, over `count` calls in sequence. */
async function cpuPerCall(count: number, run: (index: number) => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  for (let index = 0; index < count; index += 1) await run(index);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
}

export async function benchReports(): Promise<BenchSection> {
  const parse = createPhoneNumberParser(loadNumberingPlan('data/arcep'), 'FR');
  const root = mkdtempSync(join(tmpdir(), 'phone-rep-bench-reports-'));
  const folder = (name: string): string => {
    const path = join(root, name);
    mkdirSync(path);
    writeFileSync(join(path, 'lists.csv'), 'rule,list,label,note,expiresAt,createdAt\n');
    return path;
  };
  const now = Date.now();

  // In process: record() alone, then its two costliest steps alone.
  const inProcess = folder('in-process');
  const recordNumbers = distinctNumbers(parse, RECORDS, 20_000_000);
  const store = await openFileReportStore({
    path: join(inProcess, 'reports.jsonl'),
    settings: SETTINGS,
    watch: false,
  });
  let recordUs: number;
  try {
    recordUs = await cpuPerCall(RECORDS, async (index) => {
      const outcome = await store.record({
        e164: recordNumbers[index] ?? '',
        tokenId: 'tok_0123456789',
        rating: 'fraud',
        at: Date.now(),
      });
      if (!outcome.ok) throw new Error(`record() refused a vote: ${outcome.reason}`);
    });
  } finally {
    await store.close();
  }
  const lockUs = await cpuPerCall(RECORDS, async () => {
    const lock = await takeLock(join(inProcess, 'alone.lock'));
    await lock.release();
  });
  const line = `${voteLine({ e164: recordNumbers[0] ?? '', tokenId: 'tok_0123456789', rating: 'fraud', at: now }, now)}\n`;
  const appendUs = await cpuPerCall(RECORDS, async () => {
    const handle = await open(join(inProcess, 'alone.jsonl'), 'a');
    try {
      await handle.writeFile(line, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
  });

  // The seeded store: 100,000 numbers, each with a fraud and an advertising vote from two tokens
  // an hour old, written in the store's own line format and as its compaction writes the file.
  const seeded = folder('seeded');
  const reportedNumbers = distinctNumbers(parse, REPORTED, 50_000_000);
  const chunks: string[] = [];
  for (let start = 0; start < reportedNumbers.length; start += 1000) {
    const lines: string[] = [];
    for (const e164 of reportedNumbers.slice(start, start + 1000)) {
      const at = now - 3_600_000;
      lines.push(voteLine({ e164, tokenId: 'tok_00000000a1', rating: 'fraud', at }, at));
      lines.push(voteLine({ e164, tokenId: 'tok_00000000b2', rating: 'advertising', at }, at));
    }
    chunks.push(`${lines.join('\n')}\n`);
  }
  await writeFileAtomically(join(seeded, 'reports.jsonl'), chunks);
  // Read back by the store itself: every number holds its two votes and is `spam`.
  const check = await openFileReportStore({ path: join(seeded, 'reports.jsonl'), settings: SETTINGS, watch: false });
  try {
    for (const e164 of [reportedNumbers[0] ?? '', reportedNumbers.at(-1) ?? '']) {
      const verdict = check.evidence(e164, Date.now())?.verdict;
      if (check.votes(e164).length !== 2 || verdict !== 'spam')
        throw new Error(`the seeded store does not hold ${REPORTED} reported numbers (verdict ${verdict})`);
    }
  } finally {
    await check.close();
  }
  const reportedNumber = reportedNumbers[Math.floor(REPORTED / 2)] ?? '';

  const upstreams = await startFixtureUpstreams();
  const running: RunningProcess[] = [];
  const start = async (
    dir: string,
    extra: Record<string, string> = {},
  ): Promise<{ base: string; process: RunningProcess }> => {
    const port = await findFreePort();
    const process = startBuiltServer(0, {
      ...upstreams.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LISTS_FILE: join(dir, 'lists.csv'),
      RATE_LIMIT_MAX: '0',
      LOG_LEVEL: 'warn',
      HASH_SECRET: 'bench-secret-0123456789',
      ...extra,
    });
    running.push(process);
    const base = `http://127.0.0.1:${port}`;
    await waitUntilAnswering(`${base}/health`, process, 60_000);
    return { base, process };
  };
  try {
    // The CPU of a report: a token made by the real token store before start.
    const reporting = folder('reporting');
    const tokens = await openTokenStore(
      { listsFile: join(reporting, 'lists.csv'), redisKeyPrefix: '' },
      { watch: false },
    );
    const { secret } = await tokens.create({ label: 'Bench' });
    await tokens.close();
    const server = await start(reporting, { REPORT_MAX_PER_TOKEN_DAY: String(10 * (REPORTS + WARM_REPORTS)) });
    const pid = server.process.child.pid ?? 0;
    const sent = distinctNumbers(parse, WARM_REPORTS + REPORTS, 80_000_000);
    await sendReports(server.base, secret, sent.slice(0, WARM_REPORTS), REPORT_CONNECTIONS);
    const cpuBefore = cpuSecondsOfTree(pid);
    const sendStarted = performance.now();
    await sendReports(server.base, secret, sent.slice(WARM_REPORTS), REPORT_CONNECTIONS);
    const sendSeconds = (performance.now() - sendStarted) / 1000;
    const reportUs = ((cpuSecondsOfTree(pid) - cpuBefore) * 1e6) / REPORTS;
    const counted = await reportsCounted(server.base);
    if (counted !== WARM_REPORTS + REPORTS)
      throw new Error(`the server counted ${counted} reports recorded, not ${WARM_REPORTS + REPORTS}`);
    await server.process.stop();

    // Two servers: no report, and 100,000 reported numbers.
    const servers = [
      { name: '0 reported numbers', ...(await start(folder('empty'))) },
      { name: `${formatNumber(REPORTED)} reported numbers`, ...(await start(seeded)) },
    ];
    const verdictOf = (base: string, number: string): string =>
      `${base}/api/phone/${encodeURIComponent(number)}/verdict`;
    const [without, withReports] = [servers[0], servers[1]];
    if (without === undefined || withReports === undefined) throw new Error('a server did not start');
    // The reported number's evidence decides its /verdict (block, no site asked) and is in its JSON answer.
    const reportedVerdict = (await (await fetch(verdictOf(withReports.base, reportedNumber))).text()).trim();
    const reportedJson = (await (
      await fetch(`${withReports.base}/api/phone/${encodeURIComponent(reportedNumber)}`)
    ).json()) as { meta?: { reports?: { verdict?: string } | null } };
    const evidenceShown = reportedVerdict === 'block' && reportedJson.meta?.reports?.verdict === 'spam';
    // The same warm-up on both (the caches filled, then WARM_SECONDS of load), then their RSS.
    for (const each of servers) {
      await (await fetch(verdictOf(each.base, NUMBER))).text();
      await runLoad({ url: verdictOf(each.base, NUMBER), connections: 16, durationSeconds: WARM_SECONDS, core: 1 });
    }
    const [rssWithout, rssWith] = [await rssOf(without.base), await rssOf(withReports.base)];
    const runs = [
      { name: `${without.name}, not reported number`, url: verdictOf(without.base, NUMBER), rps: [] as number[] },
      {
        name: `${withReports.name}, not reported number`,
        url: verdictOf(withReports.base, NUMBER),
        rps: [] as number[],
      },
      {
        name: `${withReports.name}, reported number`,
        url: verdictOf(withReports.base, reportedNumber),
        rps: [] as number[],
      },
    ];
    await runLoad({ url: runs[2]?.url ?? '', connections: 16, durationSeconds: 1, core: 1 });
    // Each round runs the three in turn, in reverse order every other round, so that a change of
    // the machine's load meanwhile weighs on each alike; each ratio is the median of the rounds'.
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const run of round % 2 === 0 ? runs : [...runs].reverse()) {
        const result = await runLoad({ url: run.url, connections: 16, durationSeconds: ROUND_SECONDS, core: 1 });
        if (result.failures > 0) throw new Error(`${run.name}: ${result.failures} failed requests`);
        run.rps.push(result.requestsPerSecond);
      }
    }
    // Paired: both servers loaded at the same time (both on core 0), each by its own generator,
    // and the CPU each took: their ratio of answers per CPU-second is their ratio of CPU per
    // cached /verdict at the same moment of the machine.
    const pairedRatios: number[] = [];
    const perCpuSecond: [number[], number[]] = [[], []];
    for (let round = 0; round < ROUNDS; round += 1) {
      const [alone, held] = await runPairedLoad(
        [
          { url: runs[0]?.url ?? '', pid: without.process.child.pid ?? 0 },
          { url: runs[1]?.url ?? '', pid: withReports.process.child.pid ?? 0 },
        ],
        { connections: 16, durationSeconds: ROUND_SECONDS, core: 1 },
      );
      if (alone.failures + held.failures > 0) throw new Error('a paired run had failed requests');
      pairedRatios.push(held.answersPerCpuSecond / alone.answersPerCpuSecond);
      perCpuSecond[0].push(alone.answersPerCpuSecond);
      perCpuSecond[1].push(held.answersPerCpuSecond);
    }
    const pairedRatio = median(pairedRatios);
    const [base, other, reported] = runs.map((run) => median(run.rps)) as [number, number, number];
    const ratioOf = (at: number): number =>
      median(runs[at]?.rps.map((value, round) => value / (runs[0]?.rps[round] ?? Number.NaN)) ?? []);
    const [otherRatio, reportedRatio] = [ratioOf(1), ratioOf(2)];
    const reportsMiB = (rssWith - rssWithout) / 1024 ** 2;
    const rows: BenchRow[] = [
      {
        label: `POST /api/report, built server: CPU per report (${formatNumber(REPORTS)} distinct numbers, ${REPORT_CONNECTIONS} keep-alive connections)`,
        value: `${formatNumber(reportUs)} µs`,
        baseline: '1 ms (the target)',
        ratio: formatPercent(reportUs / TARGET_US),
        target: '< 1 ms',
        met: reportUs < TARGET_US,
      },
      {
        label: 'POST /api/report: reports/s (one client, sequential per connection)',
        value: formatNumber(REPORTS / sendSeconds),
      },
      {
        label: `report store's record() in process, one vote at a time (nothing to write together): CPU per vote (${formatNumber(RECORDS)} distinct numbers, file store)`,
        value: `${formatNumber(recordUs)} µs`,
        baseline: '1 ms',
        ratio: formatPercent(recordUs / TARGET_US),
      },
      {
        label: "of which, alone: the lists' lock taken and released (takeLock)",
        value: `${formatNumber(lockUs)} µs`,
      },
      {
        label: 'of which, alone: one line appended and fsynced (open, write, fsync, close)',
        value: `${formatNumber(appendUs)} µs`,
      },
      {
        label: `cached /verdict, ${formatNumber(REPORTED)} reported numbers: requests/s (median of ${ROUNDS})`,
        value: formatNumber(other),
        baseline: `${formatNumber(base)} (0 reported numbers)`,
        ratio: formatPercent(otherRatio),
        target: '≥ 95 % (no slower, within noise)',
        met: otherRatio >= 0.95,
      },
      {
        label: `cached /verdict, ${formatNumber(REPORTED)} reported numbers, paired: answers per CPU-second (median of ${ROUNDS})`,
        value: formatNumber(median(perCpuSecond[1])),
        baseline: `${formatNumber(median(perCpuSecond[0]))} (0 reported numbers, at the same time)`,
        ratio: formatPercent(pairedRatio),
      },
      {
        label: `cached /verdict of a reported number, ${formatNumber(REPORTED)} reported numbers: requests/s (median of ${ROUNDS})`,
        value: formatNumber(reported),
        baseline: `${formatNumber(base)} (a number not reported, 0 reported numbers)`,
        ratio: formatPercent(reportedRatio),
      },
      {
        label: `RSS of ${formatNumber(REPORTED)} reported numbers, ${formatNumber(2 * REPORTED)} votes (server with minus without)`,
        value: `${formatNumber(reportsMiB, 1)} MiB`,
        baseline: `${formatNumber(rssWithout / 1024 ** 2, 1)} MiB (0 reported numbers)`,
      },
    ];
    return {
      title: 'Reports: CPU per report; cached /verdict with 0 vs 100,000 reported numbers',
      rows,
      notes: [
        `CPU per report: the server's process tree (launcher and server) from /proc/<pid>/stat, utime + stime, around ${formatNumber(REPORTS)} reports after ${formatNumber(WARM_REPORTS)} unmeasured ones; the server pinned to core 0, the client (this process) unpinned; every answer a 200 and the server's phone_rep_reports_total checked to ${formatNumber(WARM_REPORTS + REPORTS)}. It includes the HTTP request, the token check, the body, the parse, the write and the metrics.`,
        "Most of a report's cost is the file store's write: the lock file created, written and removed, the file opened and stat'ed to catch up with other writers, the lines appended and fsynced, the file stat'ed again: a dozen file-system calls through libuv's thread pool. Votes asked while a write runs go in the next write together (one lock, one append, one fsync), so with several reporters at once the write is shared; a vote alone pays it whole (the in-process row, which the 1 ms target does not judge: it is one vote made durable before it is acknowledged). The fsync's time waiting for the disk is not CPU; the kernel's work for it is (stime).",
        `The seeded store: ${formatNumber(REPORTED)} 065 numbers, each with a fraud and an advertising vote from two tokens an hour old, written with the store's own line format (voteLine) and writeFileAtomically, as its compaction writes the file, and read back by the store (two votes, verdict spam) before the servers start.`,
        `Rounds of ${ROUND_SECONDS} s, 16 connections (${closedLoopGenerator()}, pinned to core 1; both servers on core 0), the three runs in turn, in reverse order every other round; the ratios are the medians of the rounds' ratios (each run over the 0-reported-numbers run of its round), the values the medians of the rounds; per round (requests/s): ${runs.map((run) => `${run.name} ${run.rps.map((v) => formatNumber(v)).join(', ')}`).join('; ')}.`,
        `Paired runs (both servers loaded at once, ${ROUND_SECONDS} s, 16 connections each, CPU of each process tree from /proc): the ratio of CPU per cached /verdict at the same moment, which the machine's load changing between runs does not move; per round: ${pairedRatios.map((value) => formatPercent(value)).join(', ')}.`,
        evidenceShown
          ? "The reported number's evidence decides its /verdict (block) and is in its JSON answer (meta.reports: spam), checked before the runs."
          : "In this tree /verdict does not yet carry the reports' evidence (its wiring lands later): both /verdict rows measure a server holding the votes in memory, not the evidence computed per request; run again once it lands.",
        'RSS: process_resident_memory_bytes of both servers after the same start and warm-up (the verdict cached, then 3 s of load); noisy by a few MiB.',
        'The machine is shared by several engineers and helpers running tests and benches at the same time (2 cores, load average well above 2): absolute figures vary between runs, and CPU per report counts preemption costs too.',
      ],
    };
  } finally {
    await Promise.all(running.map((process) => process.stop()));
    await upstreams.close();
    // The seeded file alone is 20 MB of numbers.
    rmSync(root, { recursive: true, force: true });
  }
}
