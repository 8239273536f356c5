// compose.yaml's Redis keeps the operator's lists through a restart (issue 44, finding 1): it
// persists to an append-only file on a named volume, as docker-compose's own `config` reads it.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { run } from '../support/container-image.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe("compose.yaml's Redis", () => {
  it('persists to an append-only file on a named volume, and no comment calls it a cache only', async () => {
    const text = readFileSync(join(ROOT, 'compose.yaml'), 'utf8');
    expect(text).not.toMatch(/a cache and counters only/i);
    const project = mkdtempSync(join(tmpdir(), 'compose-redis-'));
    try {
      copyFileSync(join(ROOT, 'compose.yaml'), join(project, 'compose.yaml'));
      mkdirSync(join(project, 'docker'));
      copyFileSync(join(ROOT, 'docker/nginx.conf'), join(project, 'docker/nginx.conf'));
      writeFileSync(join(project, '.env'), 'HASH_SECRET=compose-redis-secret-0123456789\n');
      const config = await run(
        'docker-compose',
        ['--project-directory', project, '-f', join(project, 'compose.yaml'), 'config'],
        { env: { ...process.env, HASH_SECRET: undefined } },
      );
      expect(config.code, config.stderr).toBe(0);
      const redis = /\n {2}redis:\n([\s\S]*?)(?=\n {2}\S|\n\S)/.exec(config.stdout)?.[1] ?? '';
      expect(redis).toMatch(/- --appendonly\n\s+- "?yes"?\n/);
      expect(redis).toMatch(/volumes:\n\s+- redis-data:\/data/);
      expect(config.stdout).toMatch(/\nvolumes:\n(?: {2}.*\n)*? {2}redis-data:/);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
