// compose.yaml's `ha` profile (issue 50), as docker-compose's own `config --profile ha` reads it:
// a primary, a replica and three sentinels from the official Redis image pinned by version, each
// persisting on its own volume, the sentinels agreeing (quorum 2) on the primary the instances ask
// for through REDIS_SENTINELS, and an nginx that reaches these instances only. Containers cannot
// run on these machines (docs/operations.md, "Containers"): the file is validated, not run; the
// failover itself is test/system/redis-failover.test.ts, with Debian's binaries.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../support/container-image.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SENTINELS = ['sentinel-1', 'sentinel-2', 'sentinel-3'];
const NODES = ['redis-primary', 'redis-replica'];

/** One service's block of `config`'s output (its lines under `  <name>:`). */
function block(config: string, name: string): string {
  return new RegExp(`\\n {2}${name}:\\n([\\s\\S]*?)(?=\\n {2}\\S|\\n\\S|$)`).exec(config)?.[1] ?? '';
}

/** A block's command as one text (the YAML folds long strings; its escapes are undone enough to read it). */
function commandOf(service: string): string {
  return service.replace(/\\\n\s*\\?/g, '').replace(/\\n/g, '\n');
}

describe("compose.yaml's ha profile", () => {
  let project: string;
  let config: string;
  let services: string[];
  beforeAll(async () => {
    project = mkdtempSync(join(tmpdir(), 'compose-ha-'));
    copyFileSync(join(ROOT, 'compose.yaml'), join(project, 'compose.yaml'));
    mkdirSync(join(project, 'docker'));
    copyFileSync(join(ROOT, 'docker/nginx.conf'), join(project, 'docker/nginx.conf'));
    writeFileSync(
      join(project, '.env'),
      readFileSync(join(ROOT, '.env.example'), 'utf8').replace(
        /^HASH_SECRET=$/m,
        'HASH_SECRET=compose-ha-secret-0123456789',
      ),
    );
    const args = ['--project-directory', project, '-f', join(project, 'compose.yaml'), '--profile', 'ha', 'config'];
    const env = { ...process.env, HASH_SECRET: undefined };
    const validated = await run('docker-compose', args, { env });
    expect(validated.code, validated.stderr).toBe(0);
    config = validated.stdout;
    // The names under `services:` (docker-compose 1.29 prints every service, whatever its profile).
    const section = /\nservices:\n([\s\S]*?)(?=\n\S|$)/.exec(`\n${config}`)?.[1] ?? '';
    services = [...section.matchAll(/^ {2}(\S+):$/gm)].map((match) => match[1] as string);
  }, 60_000);
  afterAll(() => {
    if (project !== undefined) rmSync(project, { recursive: true, force: true });
  });

  it('has a primary, a replica, three sentinels, two instances and an nginx, all in the profile', () => {
    const ha = services.filter((name) => /\n {4}profiles:\n {4}- ha\n/.test(`\n${block(config, name)}\n`)).sort();
    expect(ha).toEqual(['app-ha', 'lb-ha', ...NODES, ...SENTINELS].sort());
    expect(block(config, 'app-ha')).toMatch(/replicas: 2/);
  });

  it('runs the official Redis image pinned by version (major.minor.patch) on every node and sentinel', () => {
    for (const name of [...NODES, ...SENTINELS])
      expect(block(config, name), name).toMatch(/\n {4}image: redis:\d+\.\d+\.\d+-bookworm\n/);
  });

  it('persists every node in an append-only file on a volume of its own, the replica following the primary', () => {
    for (const name of NODES) {
      const node = block(config, name);
      expect(commandOf(node), name).toContain('appendonly yes');
      expect(node, name).toMatch(new RegExp(`volumes:\\n\\s+- ${name}-data:/data`));
      expect(node, name).toContain(`NODE: ${name}`);
    }
    expect(block(config, 'redis-replica')).toContain('REPLICA_OF: redis-primary');
    expect(commandOf(block(config, 'redis-replica'))).toContain('replicaof %s 6379');
  });

  it('has three sentinels monitoring the primary under one name with quorum 2, each with its own config volume', () => {
    for (const name of SENTINELS) {
      const sentinel = commandOf(block(config, name));
      expect(sentinel, name).toContain('sentinel monitor phonerep redis-primary 6379 2');
      expect(sentinel, name).toContain('sentinel resolve-hostnames yes');
      expect(sentinel, name).toContain('exec redis-sentinel /data/sentinel.conf');
      expect(block(config, name), name).toMatch(new RegExp(`volumes:\\n\\s+- ${name}-data:/data`));
    }
  });

  it('configures the instances through REDIS_SENTINELS naming those sentinels and that primary, not REDIS_URL', () => {
    const app = block(config, 'app-ha');
    expect(app).toContain(`REDIS_SENTINELS: ${SENTINELS.map((name) => `${name}:26379`).join(',')}`);
    expect(app).toContain('REDIS_SENTINEL_NAME: phonerep');
    expect(app).toMatch(/\n {6}REDIS_URL: ''\n/);
    expect(app).toMatch(/HASH_SECRET: compose-ha-secret-0123456789/);
    // On the profile's network as `app`, the name docker/nginx.conf asks for; lb-ha on that network only.
    expect(app).toMatch(/networks:\n\s+ha:\n\s+aliases:\n\s+- app\n/);
    expect(block(config, 'lb-ha')).toMatch(/networks:\n\s+ha: null\n(?!\s+default)/);
  });
});
