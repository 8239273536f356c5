// `npm run bench -- lists`: the operator's lists at 100,000 rules (docs/lists.md).
// - The cached `/verdict` of the built server with no rule and with 100,000 rules, the two
//   servers side by side, rounds interleaved, same load generator: the lists must not slow it.
// - The memory of 100,000 rules: the two servers' RSS after start and the same warm-up.
// - The import of 100,000 CSV lines (half exact numbers, half prefixes) into the file store, in
//   process: its time, and the longest the event loop was held meanwhile (bound: 50 ms).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadNumberingPlan } from '../src/infra/arcep/load-numbering-plan.js';
import { createPhoneNumberParser } from '../src/domain/numbering/parse-phone-number.js';
import { openFileListStore } from '../src/infra/lists/file-list-store.js';
import { readListCsvInSlices } from '../src/infra/lists/list-store.js';
import { startFixtureUpstreams } from '../harness/upstream-sites.js';
import {
  findFreePort,
  runLoad,
  startBuiltServer,
  waitUntilAnswering,
  type RunningProcess,
} from './support/processes.js';
import { formatNumber, formatPercent, type BenchRow, type BenchSection } from './support/report.js';

const RULES = 100_000;
const ROUNDS = 3;
const ROUND_SECONDS = 5;
const NUMBER = '0612345678';

function rulesCsv(parse: ReturnType<typeof createPhoneNumberParser>): string {
  const lines = ['rule,list,label,note,expiresAt'];
  // Half exact numbers the parser accepts (06 numbers away from the benched one), half prefixes.
  for (let n = 0; lines.length <= RULES / 2; n += 1) {
    const digits = `07${String(10_000_000 + n * 7).slice(-8)}`;
    if (parse(digits).ok) lines.push(`${digits},${n % 3 === 0 ? 'allow' : 'block'},Bench ${n % 100},,`);
  }
  for (let n = 0; lines.length <= RULES; n += 1) lines.push(`+3369${String(n).padStart(6, '0')}*,block,,,`);
  return `${lines.join('\n')}\n`;
}

async function rssOf(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^process_resident_memory_bytes (\d+)/m.exec(text)?.[1] ?? Number.NaN);
}

export async function benchLists(): Promise<BenchSection> {
  const parse = createPhoneNumberParser(loadNumberingPlan('data/arcep'), 'FR');
  const dir = mkdtempSync(join(tmpdir(), 'phone-rep-bench-lists-'));
  const csv = rulesCsv(parse);
  const context = { parsePhoneNumber: parse, defaultRegion: 'FR' };

  // The import, in process: time and event-loop holds.
  const store = await openFileListStore({ path: join(dir, 'imported.csv'), context, watch: false });
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const importStarted = performance.now();
  const rules = await readListCsvInSlices(csv, { context, nowMs: Date.now() });
  await store.importRules(rules);
  const importMs = performance.now() - importStarted;
  loop.disable();
  const longestHoldMs = loop.max / 1e6;
  await store.close();

  // Two built servers: no rule, and the 100,000 just imported (the store's own file).
  writeFileSync(join(dir, 'empty.csv'), 'rule,list,label,note,expiresAt,createdAt\n');
  const upstreams = await startFixtureUpstreams();
  const servers: Array<{ name: string; base: string; process: RunningProcess }> = [];
  try {
    for (const [name, file] of [
      ['0 rules', join(dir, 'empty.csv')],
      [`${formatNumber(RULES)} rules`, join(dir, 'imported.csv')],
    ] as const) {
      const port = await findFreePort();
      const process = startBuiltServer(0, {
        ...upstreams.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        LISTS_FILE: file,
        RATE_LIMIT_MAX: '0',
        LOG_LEVEL: 'warn',
        HASH_SECRET: 'bench-secret-0123456789',
      });
      const base = `http://127.0.0.1:${port}`;
      await waitUntilAnswering(`${base}/health`, process, 60_000);
      // Fill the caches: the verdict is then served from the front cache.
      await (await fetch(`${base}/api/phone/${NUMBER}/verdict`)).text();
      servers.push({ name, base, process });
    }
    const rps = servers.map(() => [] as number[]);
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [at, server] of servers.entries()) {
        const result = await runLoad({
          url: `${server.base}/api/phone/${NUMBER}/verdict`,
          connections: 16,
          durationSeconds: ROUND_SECONDS,
          core: 1,
        });
        if (result.failures > 0) throw new Error(`${server.name}: ${result.failures} failed requests`);
        rps[at]?.push(result.requestsPerSecond);
      }
    }
    const median = (values: number[]): number =>
      [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
    const [withoutRules, withRules] = [median(rps[0] ?? []), median(rps[1] ?? [])];
    const [rssWithout, rssWith] = [await rssOf(servers[0]?.base ?? ''), await rssOf(servers[1]?.base ?? '')];
    const rulesMiB = (rssWith - rssWithout) / 1024 ** 2;
    const rows: BenchRow[] = [
      {
        label: `cached /verdict, ${formatNumber(RULES)} rules: requests/s (median of ${ROUNDS})`,
        value: formatNumber(withRules),
        baseline: `${formatNumber(withoutRules)} (0 rules)`,
        ratio: formatPercent(withRules / withoutRules),
        target: '≥ 90 % (no slower, within noise)',
        met: withRules / withoutRules >= 0.9,
      },
      {
        label: `RSS of ${formatNumber(RULES)} rules (server with minus without)`,
        value: `${formatNumber(rulesMiB, 1)} MiB`,
        target: '≤ 32 MiB',
        met: rulesMiB <= 32,
      },
      {
        label: `import of ${formatNumber(RULES)} CSV lines (check, index, atomic write)`,
        value: `${formatNumber(importMs / 1000, 2)} s`,
        target: '< 10 s',
        met: importMs < 10_000,
      },
      {
        label: 'longest event-loop hold during the import',
        value: `${formatNumber(longestHoldMs, 1)} ms`,
        target: '≤ 50 ms',
        met: longestHoldMs <= 50,
      },
    ];
    return {
      title: 'Operator lists: cached /verdict with 0 vs 100,000 rules, import, memory',
      rows,
      notes: [
        `Rounds of ${ROUND_SECONDS} s, 16 connections, the two built servers alternating; per round (requests/s): 0 rules ${rps[0]?.map((v) => formatNumber(v)).join(', ')}; ${formatNumber(RULES)} rules ${rps[1]?.map((v) => formatNumber(v)).join(', ')}.`,
        'The rules: half exact 07 numbers (checked by the parser), half 11-digit prefixes; the benched number matches none, so every request walks the index.',
        'RSS: process_resident_memory_bytes of both servers after the same start and warm-up; noisy by a few MiB.',
        'The machine is shared by several engineers (2 cores): absolute figures vary between runs.',
      ],
    };
  } finally {
    await Promise.all(servers.map((server) => server.process.stop()));
    await upstreams.close();
  }
}
