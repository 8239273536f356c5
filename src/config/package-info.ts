// What the installed package is and where: its root folder (the one holding package.json), found
// from this module's own location, never from the working directory, so the server and the CLI
// find their files from wherever they are started; its version; the shipped ARCEP snapshot; the
// default state directory; and the package's `.env`. The same relative path holds from
// src/config (tests, `npm run dev`) and from dist/config (the build).
// It sits in config/ because the configuration's defaults (STATE_DIR's) are built on it, and
// config/ may import no other folder (docs/architecture.md, the dependency rule).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's root folder, absolute, without a trailing slash. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

/** A path inside the package: `packagePath('data', 'arcep')`. */
export function packagePath(...parts: string[]): string {
  return join(PACKAGE_ROOT, ...parts);
}

/** The ARCEP numbering snapshot shipped with the package (tracked by git, never written by the service). */
export const SHIPPED_ARCEP_DIR = packagePath('data', 'arcep');

/** STATE_DIR's default: `state` in the package's folder, the same whoever runs the server or the CLI. */
export const DEFAULT_STATE_DIR = packagePath('state');

let version: string | undefined;

/** package.json's version, read once when first asked. */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;
  return version;
}

/** The package's `.env`, which `npm start` and `phone-rep` read when it exists, as compose does. */
export const PACKAGE_ENV_FILE = packagePath('.env');

/**
 * Loads the package's `.env` into `process.env` when the file exists; a variable already in the
 * environment keeps its value (Node's `process.loadEnvFile`, as compose's `env_file` under
 * `environment`). Returns the file read, or undefined when there is none.
 */
export function loadPackageEnvFile(path: string = PACKAGE_ENV_FILE): string | undefined {
  if (!existsSync(path)) return undefined;
  process.loadEnvFile(path);
  return path;
}
