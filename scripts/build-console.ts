// The operator's console (docs/console.md): src/web/console/main.ts and console.css bundled and
// minified by esbuild into dist/web/console, each named by the hash of its content
// (`console.<hash>.js`), with a manifest.json naming them for the server
// (src/http/plugins/console-page.ts) and their brotli (.br) and gzip (.gz) forms as served.
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { precompress } from '../src/http/encoding.js';
import { CONSOLE_MANIFEST, type ConsoleManifest } from '../src/http/plugins/console-page.js';

const source = fileURLToPath(new URL('../src/web/console/', import.meta.url));

async function bundle(entry: string): Promise<Buffer> {
  const result = await build({
    entryPoints: [`${source}${entry}`],
    bundle: true,
    minify: true,
    write: false,
    format: 'iife',
    target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'warning',
  });
  const [file] = result.outputFiles;
  if (file === undefined) throw new Error(`build-console: esbuild wrote nothing for ${entry}`);
  return Buffer.from(file.contents);
}

const nameOf = (body: Buffer, extension: string): string =>
  `console.${createHash('sha256').update(body).digest('hex').slice(0, 16)}.${extension}`;

/** Builds the console into `outDir` (a folder path ending in `/`); answers the manifest. */
export async function buildConsole(outDir: string): Promise<ConsoleManifest> {
  // The assets of an earlier build must not linger beside the new ones.
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const script = await bundle('main.ts');
  const style = await bundle('console.css');
  const manifest: ConsoleManifest = { script: nameOf(script, 'js'), style: nameOf(style, 'css') };
  for (const [name, body] of [
    [manifest.script, script],
    [manifest.style, style],
  ] as const) {
    writeFileSync(`${outDir}${name}`, body);
    const variants = await precompress(body);
    if (variants.br !== undefined) writeFileSync(`${outDir}${name}.br`, variants.br);
    if (variants.gzip !== undefined) writeFileSync(`${outDir}${name}.gz`, variants.gzip);
  }
  writeFileSync(`${outDir}${CONSOLE_MANIFEST}`, `${JSON.stringify(manifest)}\n`);
  return manifest;
}

// Run alone (`npx tsx scripts/build-console.ts`), it rebuilds only the console, into dist/.
if (process.argv[1] === fileURLToPath(import.meta.url))
  await buildConsole(fileURLToPath(new URL('../dist/web/console/', import.meta.url)));
