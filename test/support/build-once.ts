// Vitest globalSetup of the system project: `npm run build` once per run, so that the process
// tests run what `npm start` and `phone-rep` run (dist/), never a stale build or the sources.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const result = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) {
    throw new Error(
      `npm run build failed (${result.error?.message ?? `exit ${result.status ?? result.signal ?? 'unknown'}`}): the system tests need the build`,
    );
  }
}
