// `npm run bench`: runs every bench part in sequence, prints each figure with its baseline and
// ratio, and writes docs/BENCHMARKS.md with the command, date, machine and results. Parts
// owned by other modules (cold path, scale, numbering) are loaded by their exported function
// name when their file exists; a part that is absent or fails gets a section saying so.
import { existsSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchHotPath } from './hot-path.js';
import { benchMemory } from './memory.js';
import { canPinCores, PROJECT_ROOT } from './support/processes.js';
import { failedSection, formatNumber, renderSectionMarkdown, renderSectionText, type BenchSection } from './support/report.js';

/** What the other modules' bench functions return: a name and preformatted lines. */
interface LinesResult {
  name: string;
  lines: string[];
}

type PartResult = BenchSection | LinesResult;

interface BenchPart {
  title: string;
  run: () => Promise<PartResult>;
}

function isLinesResult(value: unknown): value is LinesResult {
  return typeof value === 'object' && value !== null && typeof (value as LinesResult).name === 'string' && Array.isArray((value as LinesResult).lines);
}

function isSection(value: unknown): value is BenchSection {
  return typeof value === 'object' && value !== null && typeof (value as BenchSection).title === 'string' && Array.isArray((value as BenchSection).rows);
}

function toSection(result: PartResult): BenchSection {
  if (isSection(result)) return result;
  return { title: result.name, rows: [], notes: result.lines };
}

/** A part living in another module's file: imported when the file exists, by its function name. */
function externalPart(title: string, file: string, exportName: string): BenchPart {
  return {
    title,
    run: async () => {
      const path = join(PROJECT_ROOT, 'bench', file);
      if (!existsSync(path)) throw new Error(`bench/${file} is not in this tree yet`);
      const module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
      const run = module[exportName];
      if (typeof run !== 'function') throw new Error(`bench/${file} does not export ${exportName}()`);
      const result: unknown = await (run as () => Promise<unknown>)();
      if (isSection(result) || isLinesResult(result)) return result;
      throw new Error(`${exportName}() returned an unknown shape`);
    },
  };
}

const PARTS: BenchPart[] = [
  { title: 'Hot path: cached lookups vs bare Fastify', run: () => benchHotPath() },
  externalPart('Cold path: engine overhead and coalescing', 'cold-path.ts', 'benchColdPath'),
  externalPart('Number intelligence: phoneInfo vs bare libphonenumber', 'numbering.ts', 'benchNumbering'),
  externalPart('Scale: Redis cache vs memory, WORKERS=2 vs 1', 'scale.ts', 'benchScale'),
  { title: 'Memory: cached results', run: () => benchMemory() },
];

function describeMachine(): string[] {
  const cpuList = cpus();
  const load = loadavg().map((value) => formatNumber(value, 2));
  return [
    `- CPU: ${cpuList[0]?.model ?? 'unknown'}, ${cpuList.length} cores${canPinCores() ? ' (taskset available)' : ' (no taskset: processes not pinned)'}`,
    `- Memory: ${formatNumber(totalmem() / 1024 ** 3, 1)} GiB`,
    `- Node ${process.version} on ${process.platform}/${process.arch}`,
    `- Load average at start (1/5/15 min): ${load.join(' / ')}`,
  ];
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const machine = describeMachine();
  process.stdout.write(`phone-reputation benchmarks, ${startedAt.toISOString()}\n${machine.join('\n')}\n`);
  const sections: BenchSection[] = [];
  for (const part of PARTS) {
    process.stdout.write(`\nrunning: ${part.title} …\n`);
    const partStartedAt = performance.now();
    let section: BenchSection;
    try {
      section = toSection(await part.run());
    } catch (error) {
      section = failedSection(part.title, error);
    }
    section.notes.push(`Part took ${formatNumber((performance.now() - partStartedAt) / 1000, 0)} s.`);
    sections.push(section);
    process.stdout.write(`${renderSectionText(section)}\n`);
  }
  const totalSeconds = (Date.now() - startedAt.getTime()) / 1000;
  const missed = sections.flatMap((section) => section.rows.filter((row) => row.met === false).map((row) => `${section.title}: ${row.label}`));
  const markdown = [
    '# Benchmarks',
    '',
    'Written by `npm run bench` (bench/run.ts); every figure is measured next to its baseline in the same run,',
    'because these machines are shared and absolute figures are not comparable across runs.',
    '',
    `- Command: \`npm run bench\``,
    `- Date: ${startedAt.toISOString()}`,
    ...machine,
    `- Whole run: ${formatNumber(totalSeconds, 0)} s`,
    '',
    missed.length === 0 ? 'Every target with a figure in this run was met.' : `**Targets missed in this run:** ${missed.join('; ')}. See the notes under each section for what limits them.`,
    '',
    ...sections.map(renderSectionMarkdown),
  ].join('\n');
  writeFileSync(join(PROJECT_ROOT, 'docs', 'BENCHMARKS.md'), `${markdown.trimEnd()}\n`);
  process.stdout.write(`\nwhole run: ${formatNumber(totalSeconds, 0)} s; results written to docs/BENCHMARKS.md\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
