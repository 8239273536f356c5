// The folder-level import graph of src/ (production files only) has no cycle. ESLint's
// no-restricted-imports enforces which folder may import which; this checks the whole graph,
// dynamic imports included, so a new folder or a new kind of edge cannot close a loop unseen.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = dirname(fileURLToPath(import.meta.url));

interface SourceFile {
  /** Path relative to src/, with `/` separators. */
  path: string;
  text: string;
}

type FolderGraph = ReadonlyMap<string, ReadonlySet<string>>;

// Static `import`/`export … from`, side-effect `import '…'` and dynamic `import('…')` of a relative path.
const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

/** `domain`, `infra`, `sources`, `http`, `config`, `cli`, `web`, or `root` for src/*.ts. */
function folderOf(path: string): string {
  const parts = path.split('/');
  return parts.length === 1 ? 'root' : (parts[0] ?? 'root');
}

function productionFiles(dir: string): SourceFile[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry): SourceFile[] => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : productionFiles(full);
    if (!/\.(ts|js)$/.test(entry.name) || entry.name.endsWith('.test.ts')) return [];
    return [{ path: relative(SRC, full).split('\\').join('/'), text: readFileSync(full, 'utf8') }];
  });
}

function buildFolderGraph(files: readonly SourceFile[]): FolderGraph {
  const graph = new Map<string, Set<string>>();
  for (const file of files) {
    const from = folderOf(file.path);
    const edges = graph.get(from) ?? new Set<string>();
    graph.set(from, edges);
    for (const match of file.text.matchAll(RELATIVE_IMPORT)) {
      const specifier = match[1];
      if (specifier === undefined) continue;
      const target = normalize(join(dirname(file.path), specifier))
        .split('\\')
        .join('/');
      if (target.startsWith('..')) continue; // outside src/ (a package file, test support)
      const to = folderOf(target);
      if (to !== from) edges.add(to);
    }
  }
  return graph;
}

/** One cycle as the folders along it (first folder repeated at the end), or undefined. */
function findCycle(graph: FolderGraph): string[] | undefined {
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    const onPath = path.indexOf(node);
    if (onPath >= 0) return [...path.slice(onPath), node];
    if (done.has(node)) return undefined;
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle !== undefined) return cycle;
    }
    path.pop();
    done.add(node);
    return undefined;
  };
  for (const node of [...graph.keys()].sort()) {
    const cycle = visit(node);
    if (cycle !== undefined) return cycle;
  }
  return undefined;
}

const file = (path: string, ...imports: string[]): SourceFile => ({
  path,
  text: imports.map((spec) => `import { x } from '${spec}';`).join('\n'),
});

describe('folder-level import graph of src/', () => {
  const graph = buildFolderGraph(productionFiles(SRC));

  it('reads the real imports: adapters and infrastructure depend on the domain', () => {
    expect(graph.get('sources')).toContain('domain');
    expect(graph.get('infra')).toContain('domain');
    expect(graph.get('root')).toContain('http');
  });

  it('has no cycle', () => {
    expect(findCycle(graph)).toBeUndefined();
  });

  it('has a domain that imports no other folder', () => {
    expect([...(graph.get('domain') ?? [])]).toEqual([]);
  });
});

describe('the cycle check itself', () => {
  it('finds a two-folder cycle', () => {
    const graph = buildFolderGraph([
      file('domain/lookup/a.ts', '../../infra/b.js'),
      file('infra/b.ts', '../domain/lookup/a.js'),
    ]);
    expect(findCycle(graph)).toEqual(['domain', 'infra', 'domain']);
  });

  it('finds a cycle through three folders, the composition root and a dynamic import', () => {
    const graph = buildFolderGraph([
      file('composition.ts', './http/app.js'),
      file('http/app.ts', '../sources/s.js'),
      { path: 'sources/s.ts', text: "const root = await import('../composition.js');" },
    ]);
    expect(findCycle(graph)).toEqual(['http', 'sources', 'root', 'http']);
  });

  it('accepts imports inside one folder and edges that all point one way', () => {
    const graph = buildFolderGraph([
      file('domain/a.ts', './b.js', '../domain/ports/c.js'),
      file('infra/x.ts', '../domain/a.js'),
      file('sources/y.ts', '../infra/x.js', '../domain/a.js', '../../test/support/z.js'),
      file('composition.ts', './sources/y.js', './infra/x.js'),
    ]);
    expect(graph.get('domain')).toEqual(new Set());
    expect(graph.get('sources')).toEqual(new Set(['infra', 'domain']));
    expect(findCycle(graph)).toBeUndefined();
  });
});
