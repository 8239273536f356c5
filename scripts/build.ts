// The one build that ships: a clean dist/, the TypeScript compiled by tsc, and the lookup page's
// static files copied beside the compiled code (dist/web/static), where the server reads them,
// each with its brotli (.br) and gzip (.gz) form as served, so the server compresses nothing at start;
// and the operator's console bundled into dist/web/console (build-console.ts).
// `npm start`, `phone-rep`, the process tests and the benchmarks all run this output.
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { writePrecompressedPageFiles } from '../src/http/plugins/web-page.js';
import { buildConsole } from './build-console.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const dist = fileURLToPath(new URL('../dist/', import.meta.url));

// Files of a module removed from src/ must not survive in dist/ from an earlier build.
rmSync(dist, { recursive: true, force: true });

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (compiled.status !== 0) {
  process.stderr.write(`build: tsc failed (exit ${compiled.status ?? compiled.signal ?? 'unknown'})\n`);
  process.exit(compiled.status ?? 1);
}

cpSync(
  fileURLToPath(new URL('../src/web/static/', import.meta.url)),
  fileURLToPath(new URL('../dist/web/static/', import.meta.url)),
  { recursive: true },
);
await writePrecompressedPageFiles(fileURLToPath(new URL('../dist/web/static/', import.meta.url)));
await buildConsole(fileURLToPath(new URL('../dist/web/console/', import.meta.url)));
