// The README and docs/ are read by people who copy commands from them and follow their links.
// A command that does not exist or a link to a moved file is a bug, so every `npm run <script>`
// (and `npm test` / `npm start`) shown must be a script of package.json, every `phone-rep
// <command>` shown in code must be a command of the CLI's table, and every relative link must
// point at a file of the tree (and at one of its headings when it names one). What a newcomer
// looks up is checked too: every backticked path (`src/…`, `test/…`, `docs/…`…) must exist,
// and every backticked variable or constant (`CACHE_MAX_MB`, `SOURCE_SLOTS`) and type name
// (`LookupTimings`) must be a name the code uses (or a platform's, listed below). Pure file
// reading: it runs in the unit project.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from './cli/main.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// Written by a program from measurements, not by hand (none now: docs/benchmarks.md's results
// part is generated, and its links are checked like any page's).
const GENERATED_PAGES = new Set<string>([]);

// Pages that branches still being merged add. They are linked already so that the index is
// complete when they land; remove a name here once its page exists on main.
const PAGES_FROM_OTHER_BRANCHES = new Set<string>([]);

interface DocProblem {
  kind: 'npm script' | 'phone-rep command' | 'link' | 'anchor' | 'path' | 'name';
  what: string;
}

/** Names the docs give that belong to another program, not to this tree. */
const PLATFORM_NAMES: ReadonlyMap<string, string> = new Map([
  ['MALLOC_ARENA_MAX', 'glibc’s environment variable'],
  ['GotoIf', 'an Asterisk dialplan application'],
  ['TreeWalker', 'a DOM interface (the browser’s, not Node’s)'],
]);

/**
 * Paths and names of another project's tree that a page quotes (the integration pages cite the
 * source files of the products they were checked against), by page.
 */
const FOREIGN_CODE: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['docs/integrations/callblocker.md', new Set(['src/Block.cpp', 'src/Settings.cpp'])],
  [
    'docs/integrations/freeswitch.md',
    new Set([
      'src/mod/applications/mod_curl/mod_curl.c',
      'src/mod/dialplans/mod_dialplan_xml/mod_dialplan_xml.c',
      'src/mod/applications/mod_cidlookup/mod_cidlookup.c',
      'CURLINFO_RESPONSE_CODE',
    ]),
  ],
]);

/** The top folders a backticked path is checked in (`dist/` is built, so not checked). */
const TREE_PATH = /^((?:src|test|bench|docs|scripts|examples|bin|data|\.ci)\/[\w./@-]*)(?::\d+)?$/;
/** `CACHE_MAX_MB`, `CACHE_MAX_MB=64`, `BENCH_MEMORY_CAPS=32,64 npm run bench -- memory`. */
const CONSTANT_NAME = /^([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?:=\S*)?(?: .*)?$/;
/** `LookupTimings`, `ParsedPhoneNumber`: two capitalised parts at least, so `Vary` or `Origin` are not taken for types. */
const TYPE_NAME = /^[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+$/;

interface KnownCommands {
  npmScripts: ReadonlySet<string>;
  cliCommands: ReadonlySet<string>;
  /** Every identifier of the code (src, test, bench, scripts, examples, root configs). */
  codeNames: ReadonlySet<string>;
  fileExists: (relativeToRoot: string) => boolean;
  /** A page's text, or undefined when it is not in this tree yet (a page of another branch). */
  readPage: (relativeToRoot: string) => string | undefined;
}

/** Fenced blocks and inline code spans: where commands are shown. */
function codeParts(markdown: string): string[] {
  const parts: string[] = [];
  for (const match of markdown.matchAll(/^(```|~~~)[^\n]*\n([\s\S]*?)^\1/gm)) parts.push(match[2] ?? '');
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1/gm, '');
  for (const match of withoutFences.matchAll(/`([^`\n]+)`/g)) parts.push(match[1] ?? '');
  return parts;
}

/** Inline code spans outside fenced blocks: where a page names a file, a variable or a type. */
function inlineCode(markdown: string): string[] {
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1/gm, '');
  return [...withoutFences.matchAll(/`([^`\n]+)`/g)].map((match) => match[1] ?? '');
}

/** Every identifier written in the code and config files of these folders and root files. */
function codeNamesOf(folders: readonly string[], rootFiles: readonly string[]): Set<string> {
  const names = new Set<string>();
  const read = (path: string): void => {
    for (const match of readFileSync(join(ROOT, path), 'utf8').matchAll(/[A-Za-z_$][\w$]*/g)) names.add(match[0]);
  };
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== 'fixtures' && entry.name !== 'node_modules') walk(path);
        // This file names missing things on purpose, to show they are reported.
      } else if (/\.(?:ts|js|cfg|sh|xml)$/.test(entry.name) && path !== 'src/docs.test.ts') read(path);
    }
  };
  for (const folder of folders) if (existsSync(join(ROOT, folder))) walk(folder);
  for (const file of rootFiles) if (existsSync(join(ROOT, file))) read(file);
  return names;
}

/** Prose with code removed: where links are written. */
function proseOf(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
}

function npmScriptsShown(markdown: string): string[] {
  const names: string[] = [];
  // Anywhere, prose included: "npm run x" is a command wherever it is written.
  for (const match of markdown.matchAll(/\bnpm run ([a-z][a-z0-9:_-]*[a-z0-9])/g)) names.push(match[1] ?? '');
  for (const match of markdown.matchAll(/\bnpm (test|start)\b/g)) names.push(match[1] ?? '');
  return names;
}

function cliCommandsShown(markdown: string): string[] {
  const names: string[] = [];
  // Only in code: in prose "phone-rep" is also the name of the program ("phone-rep is the bin").
  for (const code of codeParts(markdown)) {
    for (const match of code.matchAll(/(?:^|[\s/(])phone-rep(?:\.js)?[ \t]+([a-z][a-z-]*)/gm)) names.push(match[1] ?? '');
  }
  return names;
}

/** Relative link targets, with their `#fragment` when they have one. */
function relativeLinks(markdown: string): string[] {
  const targets: string[] = [];
  for (const match of proseOf(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1] ?? '';
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#') || target.startsWith('/')) continue;
    targets.push(target.replace(/\?[^#]*/, ''));
  }
  return targets;
}

/** The anchors a renderer gives a page's headings (GitHub's rule: lower case, punctuation dropped, spaces to dashes). */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1/gm, '');
  for (const match of withoutFences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = (match[1] ?? '').toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n += 1) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

function checkDocument(markdown: string, pagePath: string, known: KnownCommands): DocProblem[] {
  const problems: DocProblem[] = [];
  for (const script of npmScriptsShown(markdown)) {
    if (!known.npmScripts.has(script)) problems.push({ kind: 'npm script', what: script });
  }
  for (const command of cliCommandsShown(markdown)) {
    if (!known.cliCommands.has(command)) problems.push({ kind: 'phone-rep command', what: command });
  }
  const foreign = FOREIGN_CODE.get(pagePath) ?? new Set<string>();
  for (const code of inlineCode(markdown)) {
    if (foreign.has(code)) continue;
    const path = TREE_PATH.exec(code)?.[1];
    if (path !== undefined && !/[*<{]/.test(code) && !known.fileExists(path)) problems.push({ kind: 'path', what: code });
    const name = CONSTANT_NAME.exec(code)?.[1] ?? (TYPE_NAME.test(code) ? code : undefined);
    if (name !== undefined && !known.codeNames.has(name) && !PLATFORM_NAMES.has(name) && !(name in globalThis)) problems.push({ kind: 'name', what: name });
  }
  for (const target of relativeLinks(markdown)) {
    const [file = '', fragment] = target.split('#');
    const fromRoot = relative(ROOT, resolve(ROOT, dirname(pagePath), decodeURI(file)));
    if (!known.fileExists(fromRoot)) problems.push({ kind: 'link', what: target });
    else if (fragment !== undefined && fromRoot.endsWith('.md')) {
      const page = known.readPage(fromRoot);
      if (page !== undefined && !headingAnchors(page).has(decodeURIComponent(fragment))) problems.push({ kind: 'anchor', what: target });
    }
  }
  return problems;
}

function markdownPages(): string[] {
  const pages = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md') && !GENERATED_PAGES.has(path)) pages.push(path);
    }
  };
  walk('docs');
  return pages;
}

function projectCommands(): KnownCommands {
  const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  return {
    npmScripts: new Set(Object.keys(packageJson.scripts ?? {})),
    // runCli answers `help` itself, before looking the name up in the table.
    cliCommands: new Set([...COMMANDS.map((command) => command.name), 'help']),
    codeNames: codeNamesOf(['src', 'test', 'bench', 'harness', 'scripts', 'examples', '.ci', 'docker'], ['eslint.config.js', 'vitest.config.ts', '.env.example', 'Dockerfile', 'compose.yaml']),
    fileExists: (path) => existsSync(join(ROOT, path)) || PAGES_FROM_OTHER_BRANCHES.has(path),
    readPage: (path) => (existsSync(join(ROOT, path)) ? readFileSync(join(ROOT, path), 'utf8') : undefined),
  };
}

describe('commands and links shown in README.md and docs/', () => {
  const known = projectCommands();
  const pages = markdownPages();

  it('finds the README and the docs pages, and real commands in them', () => {
    expect(pages).toContain('README.md');
    expect(pages).toContain('docs/api.md');
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(npmScriptsShown(readme)).toEqual(expect.arrayContaining(['test', 'start', 'test:unit', 'bench']));
    expect(relativeLinks(readme)).toEqual(expect.arrayContaining(['docs/api.md']));
  });

  it('reaches every docs page from README.md by following links', () => {
    const reached = new Set<string>(['README.md']);
    const queue = ['README.md'];
    for (let page = queue.shift(); page !== undefined; page = queue.shift()) {
      const markdown = known.readPage(page);
      if (markdown === undefined || GENERATED_PAGES.has(page)) continue;
      for (const target of relativeLinks(markdown)) {
        const linked = relative(ROOT, resolve(ROOT, dirname(page), decodeURI(target.split('#')[0] ?? '')));
        if (linked.endsWith('.md') && !reached.has(linked)) {
          reached.add(linked);
          queue.push(linked);
        }
      }
    }
    expect(pages.filter((page) => !reached.has(page))).toEqual([]);
  });

  it.each(pages)('%s shows only existing npm scripts, phone-rep commands, paths, variables and type names, and links only to existing files', (page) => {
    const markdown = readFileSync(join(ROOT, page), 'utf8');
    expect(checkDocument(markdown, page, known)).toEqual([]);
  });

  it('reports a misspelled npm script, a misspelled phone-rep command, a link to a missing file and to a missing heading', () => {
    const text = [
      'Run `npm run bnech` to measure, or `npm run bench`.',
      '```sh',
      'phone-rep lookpu 0612345678',
      'phone-rep lookup 0612345678',
      '```',
      'See [the engine](docs/engin.md) and [the API](docs/api.md).',
      'Errors: [here](docs/api.md#errors), [not here](docs/api.md#erors).',
    ].join('\n');
    expect(checkDocument(text, 'README.md', known)).toEqual([
      { kind: 'npm script', what: 'bnech' },
      { kind: 'phone-rep command', what: 'lookpu' },
      { kind: 'link', what: 'docs/engin.md' },
      { kind: 'anchor', what: 'docs/api.md#erors' },
    ]);
  });

  it('reports a backticked path, variable or type name that the tree does not have', () => {
    const text = [
      'The engine is `src/domain/lookup/lookup-service.ts`, not `src/domain/lookup/engine.ts`; each adapter in `src/sources/<upstream>`.',
      'Set `CACHE_MAX_MB=64` and `LOOKUP_TIMEOUT_MS`, not `LOOKUP_DEADLINE_MS`; slots come from `SOURCE_SLOTS`.',
      'The engine takes `LookupTimings`, not `LookupConfig`; the `Vary` header; glibc reads `MALLOC_ARENA_MAX`; `AbortSignal` is Node’s.',
    ].join('\n');
    expect(checkDocument(text, 'README.md', known)).toEqual([
      { kind: 'path', what: 'src/domain/lookup/engine.ts' },
      { kind: 'name', what: 'LOOKUP_DEADLINE_MS' },
      { kind: 'name', what: 'LookupConfig' },
    ]);
  });

  it('resolves a link relative to the page that holds it', () => {
    const text = 'See [the API](../api.md) and [the tree](../../README.md).';
    expect(checkDocument(text, 'docs/adr/0001-x.md', known)).toEqual([]);
    expect(checkDocument(text, 'docs/x.md', known)).toEqual([
      { kind: 'link', what: '../api.md' },
      { kind: 'link', what: '../../README.md' },
    ]);
  });

  it('derives heading anchors as the renderer does: code marks and punctuation dropped, accents kept', () => {
    const anchors = headingAnchors('# Refreshing it: `phone-rep data update`\n```sh\n# not a heading\n```\n## Réseau & `meta.hints`\n## Réseau & `meta.hints`');
    expect([...anchors]).toEqual(['refreshing-it-phone-rep-data-update', 'réseau--metahints', 'réseau--metahints-1']);
  });

  it('does not take the program name in prose, or a link written inside code, for a command or a link', () => {
    const text = 'phone-rep is the package bin; `[a](missing.md)` is code, as is `phone-rep --url`.';
    expect(checkDocument(text, 'README.md', known)).toEqual([]);
  });
});
