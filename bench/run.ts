// `npm run bench`: runs every bench part in sequence, prints each figure with its baseline and
// ratio, and writes docs/benchmark-results.md (the whole file is generated: a header saying so,
// then the command, date, machine and results; what each bench measures is docs/benchmarks.md,
// written by hand). Parts owned by other modules (cold path, scale, numbering) are loaded by
// their exported function name when their file exists; a part that is absent or fails gets a
// section saying so. `npm run bench -- memory scale` runs only the named parts and replaces only
// their sections in docs/benchmark-results.md, keeping the others from the last run.
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchHotPath } from './hot-path.js';
import { benchMemory } from './memory.js';
import { canPinCores, PROJECT_ROOT } from './support/processes.js';
import {
  failedSection,
  formatNumber,
  formatPercent,
  renderSectionMarkdown,
  renderSectionText,
  type BenchSection,
} from './support/report.js';

/** What the other modules' bench functions return: a name and preformatted lines. */
interface LinesResult {
  name: string;
  lines: string[];
}

type PartResult = BenchSection | LinesResult;

export interface BenchPart {
  /** What `npm run bench -- <name>` selects it by. */
  name: string;
  title: string;
  run: () => Promise<PartResult>;
}

function isLinesResult(value: unknown): value is LinesResult {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as LinesResult).name === 'string' &&
    Array.isArray((value as LinesResult).lines)
  );
}

function isSection(value: unknown): value is BenchSection {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as BenchSection).title === 'string' &&
    Array.isArray((value as BenchSection).rows)
  );
}

function toSection(result: PartResult): BenchSection {
  if (isSection(result)) return result;
  return { title: result.name, rows: [], notes: result.lines };
}

/** A part living in another module's file: imported when the file exists, by its function name. */
function externalPart(name: string, title: string, file: string, exportName: string): BenchPart {
  return {
    name,
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

/** Every part, in the order a whole run takes them (exported for test/bench/parts.test.ts). */
export const PARTS: BenchPart[] = [
  { name: 'hot-path', title: 'Hot path: cached lookups vs bare Fastify', run: () => benchHotPath() },
  externalPart('cold-path', 'Cold path: engine overhead and coalescing', 'cold-path.ts', 'benchColdPath'),
  externalPart('numbering', 'Number intelligence: phoneInfo vs bare libphonenumber', 'numbering.ts', 'benchNumbering'),
  externalPart('scale', 'Scale: Redis cache vs memory, WORKERS=2 vs 1', 'scale.ts', 'benchScale'),
  { name: 'memory', title: 'Memory: what the process takes per CACHE_MAX_MB', run: () => benchMemory() },
  externalPart('pbx', 'PBX: call-setup delay through Kamailio', 'pbx.ts', 'benchPbx'),
  externalPart(
    'lists',
    'Operator lists: cached /verdict with 0 vs 100,000 rules, import, memory',
    'lists.ts',
    'benchLists',
  ),
  externalPart('feed', 'Blocklist feed at 1000 entries', 'feed.ts', 'benchFeed'),
  externalPart(
    'reports',
    'Reports: CPU per report; cached /verdict with 0 vs 100,000 reported numbers',
    'reports.ts',
    'benchReports',
  ),
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

/** The machine's CPU time so far from /proc/stat (all cores, in ticks): the total and what the hypervisor took (steal). */
function machineCpuTicks(): { total: number; steal: number } | undefined {
  try {
    const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
      .trim()
      .split(/\s+/)
      .slice(1, 9)
      .map(Number);
    if (fields.length < 8 || fields.some((value) => !Number.isFinite(value))) return undefined;
    return { total: fields.reduce((sum, value) => sum + value, 0), steal: fields[7] ?? 0 };
  } catch {
    return undefined;
  }
}

/**
 * On a virtual machine, the share of its CPU time the hypervisor gave to other guests during a
 * part: a high one means the figures were taken on a crowded host (and ratios move more).
 */
function stealNote(before: ReturnType<typeof machineCpuTicks>): string | undefined {
  const after = machineCpuTicks();
  if (before === undefined || after === undefined || after.total <= before.total) return undefined;
  return `CPU time taken by the hypervisor during the part (steal, /proc/stat, both cores): ${formatPercent((after.steal - before.steal) / (after.total - before.total))}.`;
}

/** The parts named on the command line (all when none is); an unknown name stops the run before anything runs. */
export function selectParts(names: string[]): BenchPart[] {
  if (names.length === 0) return PARTS;
  const known = new Set(PARTS.map((part) => part.name));
  const unknown = names.filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new Error(
      `unknown bench part ${unknown.map((name) => JSON.stringify(name)).join(', ')}; the parts are: ${[...known].join(', ')}`,
    );
  }
  return PARTS.filter((part) => names.includes(part.name));
}

/** Generated whole by this runner; the hand-written guide is docs/benchmarks.md. */
const RESULTS_DOC = join(PROJECT_ROOT, 'docs', 'benchmark-results.md');
/** The line that ends the generated file's fixed header; the results follow it. */
const RESULTS_MARKER =
  '<!-- Results: everything below is written by `npm run bench` (bench/run.ts); do not edit it by hand. -->';
/** The fixed header of docs/benchmark-results.md, marker included. */
const RESULTS_HEADER = [
  '# Benchmark results',
  '',
  'This file is generated by `npm run bench` (`bench/run.ts`), which rewrites it on every run; do not edit it by hand.',
  'What each bench measures, how to run it and its targets: [benchmarks.md](benchmarks.md).',
  '',
  RESULTS_MARKER,
  '',
].join('\n');

/**
 * The generated results of docs/benchmark-results.md, below its header. Without the marker the
 * runner cannot tell where the last results start, and a partial run would lose or repeat
 * sections: it refuses instead.
 */
function resultsOf(markdown: string): string {
  const at = markdown.indexOf(RESULTS_MARKER);
  if (at === -1)
    throw new Error(
      `docs/benchmark-results.md has lost its results marker; put this line back above the generated sections, then run again:\n${RESULTS_MARKER}`,
    );
  return markdown.slice(at + RESULTS_MARKER.length).replace(/^\n+/, '');
}

/** Splits the results into its head (up to the first section) and its `## ` sections, in order. */
function splitSections(markdown: string): { head: string; sections: { title: string; text: string }[] } {
  const blocks = markdown.split(/^(?=## )/m);
  const head = blocks[0]?.startsWith('## ') ? '' : (blocks.shift() ?? '');
  return {
    head,
    sections: blocks.map((text) => ({
      title: (text.split('\n')[0] ?? '').slice(3).trim(),
      text: `${text.trimEnd()}\n`,
    })),
  };
}

/** The first cell of every table row whose target says MISSED, as `Section: measure`. */
function missedTargets(sections: { title: string; text: string }[]): string[] {
  return sections.flatMap((section) =>
    section.text
      .split('\n')
      .filter((line) => line.startsWith('| ') && line.includes('(MISSED)'))
      .map((line) => `${section.title}: ${(line.slice(2).split(' | ')[0] ?? '').trim()}`),
  );
}

function missedLine(missed: string[]): string {
  return missed.length === 0
    ? 'Every target with a figure in this run was met.'
    : `**Targets missed in this run:** ${missed.join('; ')}. See the notes under each section for what limits them.`;
}

/**
 * the results after a run of some parts only: their sections replaced (or appended), the
 * others kept from the last run, and the line of missed targets recomputed over all of them.
 */
function mergeIntoExisting(existing: string, fresh: BenchSection[], note: string): string {
  const { head, sections } = splitSections(existing);
  for (const section of fresh) {
    const text = renderSectionMarkdown(section);
    const at = sections.findIndex((candidate) => candidate.title === section.title);
    if (at === -1) sections.push({ title: section.title, text });
    else sections[at] = { title: section.title, text };
  }
  const headLines = head
    .trimEnd()
    .split('\n')
    .filter(
      (line) =>
        !line.startsWith('**Targets missed') &&
        !line.startsWith('Every target with a figure') &&
        !line.startsWith('- Partial run:'),
    );
  while (headLines.at(-1) === '') headLines.pop();
  return [
    ...headLines,
    note,
    '',
    missedLine(missedTargets(sections)),
    '',
    ...sections.map((section) => section.text),
  ].join('\n');
}

async function main(): Promise<void> {
  const selected = selectParts(process.argv.slice(2).filter((arg) => arg !== '--'));
  const partial = selected.length < PARTS.length;
  const startedAt = new Date();
  // Refused before the parts run, not after: a lost marker must not cost a 40-minute run.
  if (existsSync(RESULTS_DOC)) resultsOf(readFileSync(RESULTS_DOC, 'utf8'));
  const machine = describeMachine();
  process.stdout.write(`phone-reputation benchmarks, ${startedAt.toISOString()}\n${machine.join('\n')}\n`);
  const sections: BenchSection[] = [];
  for (const part of selected) {
    process.stdout.write(`\nrunning: ${part.title} …\n`);
    const partStartedAt = performance.now();
    const cpuBefore = machineCpuTicks();
    let section: BenchSection;
    try {
      section = toSection(await part.run());
    } catch (error) {
      section = failedSection(part.title, error);
    }
    section.notes.push(`Part took ${formatNumber((performance.now() - partStartedAt) / 1000, 0)} s.`);
    const steal = stealNote(cpuBefore);
    if (steal !== undefined) section.notes.push(steal);
    if (partial)
      section.notes.push(
        `Run alone (\`npm run bench -- ${part.name}\`) on ${startedAt.toISOString()}, Node ${process.version}; ${machine.at(-1)?.replace(/^- /, '') ?? ''}.`,
      );
    sections.push(section);
    process.stdout.write(`${renderSectionText(section)}\n`);
  }
  const totalSeconds = (Date.now() - startedAt.getTime()) / 1000;
  const path = RESULTS_DOC;
  const results = existsSync(path) ? resultsOf(readFileSync(path, 'utf8')) : '';
  if (partial && results.trim() !== '') {
    const note = `- Partial run: ${selected.map((part) => part.name).join(', ')} re-run on ${startedAt.toISOString()}, Node ${process.version} (\`npm run bench -- ${selected.map((part) => part.name).join(' ')}\`); the other sections are from the run above.`;
    writeFileSync(path, `${RESULTS_HEADER}\n${mergeIntoExisting(results, sections, note).trimEnd()}\n`);
    process.stdout.write(
      `\nwhole run: ${formatNumber(totalSeconds, 0)} s; sections replaced in docs/benchmark-results.md\n`,
    );
    return;
  }
  const missed = sections.flatMap((section) =>
    section.rows.filter((row) => row.met === false).map((row) => `${section.title}: ${row.label}`),
  );
  const markdown = [
    RESULTS_HEADER,
    '**Results of the last run.** Every figure is measured next to its baseline in the same run,',
    'because these machines are shared and absolute figures are not comparable across runs.',
    '',
    `- Command: \`npm run bench${partial ? ` -- ${selected.map((part) => part.name).join(' ')}` : ''}\``,
    `- Date: ${startedAt.toISOString()}`,
    ...machine,
    `- Whole run: ${formatNumber(totalSeconds, 0)} s`,
    '',
    missedLine(missed),
    '',
    ...sections.map(renderSectionMarkdown),
  ].join('\n');
  writeFileSync(path, `${markdown.trimEnd()}\n`);
  process.stdout.write(
    `\nwhole run: ${formatNumber(totalSeconds, 0)} s; results written to docs/benchmark-results.md\n`,
  );
}

/** Run as the script (`tsx bench/run.ts`), not imported (a test reading the parts). */
function runAsScript(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return pathToFileURL(realpathSync(script)).href === import.meta.url;
  } catch {
    return false;
  }
}

if (runAsScript())
  main().catch((error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
