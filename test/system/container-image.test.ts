// The container image, built from the real Dockerfile by scripts/test-image.sh on a stand-in
// for node:24-bookworm-slim, and started from the image (never the work tree) with
// `buildah run --isolation=chroot --network=host`: no OCI runtime can start a container on
// this machine (docs/testing.md, "The container image"). The image's own ENTRYPOINT and CMD
// are run, as its own user, with fake upstream sites, a fake ARCEP server and the machine's
// Redis on loopback. compose.yaml is validated by docker-compose's own `config`.
// Skipped, saying why, only where podman, buildah and mmdebstrap cannot be installed.
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveOnLoopback, type LoopbackHttp } from '../../harness/loopback.js';
import { connectAdmin, deleteKeys, listKeys, uniqueKeyPrefix, waitFor } from '../support/redis.js';
import { spawnServer, startSlowUnknownUpstream, type ServerProcess, type SlowUpstream } from '../../harness/servers.js';
import {
  KNOWN_NUMBER,
  startFakeUpstreamSites,
  startFixtureUpstreams,
  type FakeUpstreamSites,
} from '../../harness/upstream-sites.js';
import {
  buildTestImage,
  descendants,
  inspectImage,
  run,
  startImageServer,
  VOLUME,
  WorkingContainer,
  type BuiltImage,
  type ImageServer,
} from '../support/container-image.js';
import { watchOutput } from '../../harness/processes.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SECRET = 'container-test-secret-0123456789';
/** The image's user (Dockerfile: USER 10001:10001). */
const IMAGE_UID = 10001;
const MiB = 1024 * 1024;

let built: BuiltImage | undefined;
let skipped: string | undefined;
const containers: WorkingContainer[] = [];
const servers: ImageServer[] = [];
const scratch = mkdtempSync(join(tmpdir(), 'container-image-'));

/** A host directory for the image's volume, owned by the image's user as a fresh named volume is. */
function volumeDir(name: string): string {
  const dir = join(scratch, name);
  mkdirSync(dir);
  chmodSync(dir, 0o755);
  return dir;
}

async function chownToImageUser(dir: string): Promise<void> {
  const result = await run('chown', ['-R', `${IMAGE_UID}:${IMAGE_UID}`, dir]);
  if (result.code !== 0) throw new Error(`chown ${dir}: ${result.stderr}`);
}

async function container(options: { readOnly?: boolean } = {}): Promise<WorkingContainer> {
  if (!built) throw new Error('no image');
  const made = await WorkingContainer.create(built.image, options);
  containers.push(made);
  return made;
}

async function serve(
  made: WorkingContainer,
  options: { env?: Record<string, string>; volume?: string },
): Promise<ImageServer> {
  const server = await startImageServer(made, options);
  servers.push(server);
  return server;
}

/** The same body apart from the instants it carries (fetchedAt, timestamps). */
function withoutInstants(body: string): string {
  return body.replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<instant>');
}

beforeAll(async () => {
  const result = await buildTestImage();
  if ('skipped' in result) skipped = result.skipped;
  else {
    built = result.built;
    process.stderr.write(`${built.log}`);
  }
}, 15 * 60_000);

afterAll(async () => {
  for (const server of servers) server.kill();
  await Promise.all(servers.map((server) => server.exited));
  for (const made of containers) await made.remove();
  rmSync(scratch, { recursive: true, force: true });
}, 60_000);

describe('the image as built', () => {
  it('runs tini, then the entrypoint, then the server by default, as a numeric non-root user, with its volume, port, health check and OCI labels', async (context) => {
    if (!built) return context.skip(`container image not built: ${skipped ?? 'unknown reason'}`);
    const { Config, Healthcheck } = await inspectImage(built.image);
    expect(Config.Entrypoint).toEqual(['/usr/bin/tini', '-s', '--', '/app/docker/entrypoint.sh']);
    // The serve command is what `npm start` runs (its paths under /app), so the two cannot drift apart.
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
    expect(Config.Cmd).toEqual(
      scripts.start
        .replace(/^exec /, '')
        .split(/\s+/)
        .map((word) => (word.startsWith('dist/') ? `/app/${word}` : word)),
    );
    expect(Config.User).toBe(`${IMAGE_UID}:${IMAGE_UID}`);
    expect(Object.keys(Config.Volumes ?? {})).toEqual([VOLUME]);
    expect(Object.keys(Config.ExposedPorts ?? {})).toEqual(['3000/tcp']);
    expect(Healthcheck?.Test).toEqual(['CMD', 'node', '/app/docker/healthcheck.mjs']);
    expect(Config.Env).toEqual(
      expect.arrayContaining([`STATE_DIR=${VOLUME}`, `LISTS_FILE=${VOLUME}/lists.csv`, 'PORT=3000']),
    );
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      version: string;
      license: string;
    };
    // The Dockerfile's VERSION default is the package's version, so a plain `docker build` labels it right.
    expect(Config.Labels).toMatchObject({
      'org.opencontainers.image.version': manifest.version,
      'org.opencontainers.image.licenses': manifest.license,
    });
    expect(Config.Labels?.['org.opencontainers.image.source']).toMatch(/^https:\/\//);
  });

  it('adds less than 80 MiB to its base', async (context) => {
    if (!built) return context.skip(`container image not built: ${skipped ?? 'unknown reason'}`);
    const [image, base] = await Promise.all([inspectImage(built.image), inspectImage(built.base)]);
    const added = image.Size - base.Size;
    process.stderr.write(`container image: ${(added / MiB).toFixed(1)} MiB of project layers over the base\n`);
    expect(added).toBeGreaterThan(0);
    expect(added).toBeLessThan(80 * MiB);
  });
});

describe("the image's server", () => {
  let sites: FakeUpstreamSites;
  let slow: SlowUpstream;
  let worktree: ServerProcess | undefined;
  let server: ImageServer;
  let volume: string;
  beforeAll(async () => {
    if (!built) return;
    sites = await startFakeUpstreamSites({ fallback: { ...KNOWN_NUMBER } });
    slow = await startSlowUnknownUpstream(1500);
    volume = volumeDir('serve');
    await chownToImageUser(volume);
    server = await serve(await container(), {
      volume,
      env: { ...sites.env(), HASH_SECRET: SECRET, SHUTDOWN_GRACE_MS: '8000' },
    });
  }, 240_000);
  afterAll(async () => {
    if (worktree) {
      worktree.child.kill('SIGTERM');
      await worktree.exited;
    }
    await sites?.close();
    await slow?.close();
  });

  it("answers /health/ready from the image's ARCEP snapshot, writing none to the volume, and runs as the image user under tini, in one Node process", async (context) => {
    if (!built) return context.skip(`container image not built: ${skipped ?? 'unknown reason'}`);
    const ready = await fetch(`${server.baseUrl}/health/ready`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { dependencies: { numberingData: { status: string } } };
    expect(body.dependencies.numberingData.status).not.toBe('down');
    // Until `phone-rep data update` writes the volume's arcep/, the image's snapshot is read. The
    // start-up line follows "Server listening" in the log's next batch: awaited, not assumed.
    const startLine = new RegExp(
      `state in ${VOLUME}, .*ARCEP data of \\d{4}-\\d{2}-\\d{2} \\(shipped snapshot /app/data/arcep\\)`,
    );
    await waitFor(() => startLine.test(server.output()));
    expect(existsSync(join(volume, 'arcep'))).toBe(false);
    const { init, node, nodeCount } = server.processes();
    expect(init?.uid).toBe(IMAGE_UID);
    expect(node?.uid).toBe(IMAGE_UID);
    // The entrypoint execs the launcher's plan: no relaunching parent beside the server.
    expect(nodeCount).toBe(1);
  });

  it("gives a lookup the same body as the work tree's server, against the same fake upstreams", async (context) => {
    if (!built) return context.skip(`container image not built: ${skipped ?? 'unknown reason'}`);
    worktree = await spawnServer({ ...sites.env(), HASH_SECRET: SECRET }, 150_000);
    for (const path of ['/api/phone/0612345678', '/api/phone/0612345678/score', '/api/phone/0162005678/info']) {
      const [fromImage, fromTree] = await Promise.all([
        fetch(`${server.baseUrl}${path}`),
        fetch(`${worktree.baseUrl}${path}`),
      ]);
      expect(fromImage.status, path).toBe(200);
      expect(fromImage.status, path).toBe(fromTree.status);
      expect(withoutInstants(await fromImage.text()), path).toBe(withoutInstants(await fromTree.text()));
    }
  }, 240_000);

  it("runs the image's HEALTHCHECK command: 0 while the server is ready, 1 at a port where nothing listens", async (context) => {
    if (!built) return context.skip(`container image not built: ${skipped ?? 'unknown reason'}`);
    const made = await container();
    const { Healthcheck } = await inspectImage(built.image);
    const healthcheck = (Healthcheck?.Test ?? []).slice(1);
    expect(healthcheck).toEqual(['node', '/app/docker/healthcheck.mjs']);
    const ready = await made.exec({ command: healthcheck, env: { HOST: '127.0.0.1', PORT: String(server.port) } });
    expect(ready.code, ready.stderr).toBe(0);
    const probe = await serveOnLoopback((_request, response) => response.end());
    const freePort = probe.port;
    await probe.close();
    const down = await made.exec({ command: healthcheck, env: { HOST: '127.0.0.1', PORT: String(freePort) } });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('health check failed');
  }, 240_000);

  it('on SIGTERM to its init, finishes the request in flight, then exits 0 within SHUTDOWN_GRACE_MS', async (context) => {
    if (!built) return context.skip(`container image not built: ${skipped ?? 'unknown reason'}`);
    // A server of its own whose upstream answers after 1.5 s, so a lookup is in flight at the signal.
    const draining = await serve(await container(), {
      volume: volumeDir('drain-unused-root-owned'),
      env: { ...slow.env, HASH_SECRET: SECRET, SHUTDOWN_GRACE_MS: '8000' },
    });
    const arrived = slow.nextRequest();
    const inFlight = fetch(`${draining.baseUrl}/api/phone/0698765432`);
    await arrived;
    const signalledAt = Date.now();
    draining.terminate();
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(await draining.exited).toBe(0);
    // The deadline is the behaviour: the drain ends well before the grace period.
    expect(Date.now() - signalledAt).toBeLessThan(8000);
    expect(draining.output()).toMatch(/SIGTERM received: finishing in-flight requests/);
  }, 240_000);
});

describe("the image's init", () => {
  it('reaps an orphaned process once it exits (tini as sub-reaper), so no zombie stays behind', async (context) => {
    if (!built) return context.skip(`container image not built: ${skipped ?? 'unknown reason'}`);
    const made = await container();
    // A subshell starts a short-lived process and exits at once: the process is orphaned and
    // goes to tini; the command then stays up so that tini is still there when it ends.
    const child = made.spawn({ command: ['sh', '-c', '(sleep 5 & echo "orphan $!"); exec sleep 60'] });
    const { printed, output } = watchOutput(child);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await printed(/orphan (\d+)/);
      const orphan = Number(/orphan (\d+)/.exec(output())?.[1]);
      const stat = (): { state?: string; ppid?: number } => {
        try {
          const line = readFileSync(`/proc/${orphan}/stat`, 'utf8');
          const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
          return { state: fields[0], ppid: Number(fields[1]) };
        } catch {
          return {};
        }
      };
      const state = (): string | undefined => stat().state;
      // While it lives (5 s), its parent is the image's init, not the host's.
      const tini = child.pid === undefined ? undefined : descendants(child.pid).find((each) => each.comm === 'tini');
      expect(tini).toBeDefined();
      expect(stat().ppid).toBe(tini?.pid);
      // Gone from /proc means reaped; an orphan nobody reaps stays a zombie (state Z) for good.
      await waitFor(() => state() === undefined, 15_000).catch(() => {
        throw new Error(`the orphan ${orphan} was not reaped (state ${state() ?? 'gone'})`);
      });
    } finally {
      for (const each of child.pid === undefined ? [] : descendants(child.pid).reverse()) {
        try {
          process.kill(each.pid, 'SIGKILL');
        } catch {
          // It ended on its own in the meantime.
        }
      }
      await exited;
    }
  }, 120_000);
});

describe('the CLI from the image', () => {
  it('runs phone-rep info, lookup --json, data info and canary through the entrypoint', async (context) => {
    if (!built) return context.skip(`container image not built: ${skipped ?? 'unknown reason'}`);
    const upstreams = await startFixtureUpstreams();
    try {
      const made = await container();
      const info = await made.exec({ command: ['phone-rep', 'info', '0162005678', '--json'] });
      expect(info.code, info.stderr).toBe(0);
      expect(JSON.parse(info.stdout)).toMatchObject({ data: { number: '0162005678', phoneInfo: { isNPV: true } } });
      const lookup = await made.exec({ command: ['phone-rep', 'lookup', '0612345678', '--json'], env: upstreams.env });
      expect(lookup.code, lookup.stderr).toBe(0);
      expect(JSON.parse(lookup.stdout)).toMatchObject({
        success: true,
        data: { number: '0612345678' },
        meta: { sources: { community: { status: 'ok' } } },
      });
      // No volume here: the image's snapshot is read.
      const data = await made.exec({ command: ['phone-rep', 'data', 'info'] });
      expect(data.code, data.stderr).toBe(0);
      expect(data.stdout).toMatch(/^ARCEP data in .*: data date \d{4}-\d{2}-\d{2}/);
      const canary = await made.exec({ command: ['phone-rep', 'canary', '0612345678'], env: upstreams.env });
      expect(canary.code, canary.stdout + canary.stderr).toBe(0);
      expect(canary.stdout.trim().split('\n').at(-1)).toBe(
        'canary: all upstreams answered and every required marker was found',
      );
    } finally {
      await upstreams.close();
    }
  }, 300_000);
});

describe('a read-only root file system with the volume', () => {
  let arcep: LoopbackHttp;
  const served = Object.fromEntries(
    ['MAJNUM.csv', 'MAJRIO.csv', 'identifiants_ce.csv'].map((file) => [
      file,
      readFileSync(join(ROOT, 'data/arcep', file)),
    ]),
  );
  // A MAJRIO with one row fewer, so the update is seen to have written what was served.
  const majrioLines = (served['MAJRIO.csv'] ?? Buffer.alloc(0)).toString('latin1').split('\n');
  served['MAJRIO.csv'] = Buffer.from([...majrioLines.slice(0, -2), ...majrioLines.slice(-1)].join('\n'), 'latin1');
  beforeAll(async () => {
    arcep = await serveOnLoopback((request, response) => {
      const body =
        served[
          (request.url ?? '').slice(1) === 'identifiants_CE.csv' ? 'identifiants_ce.csv' : (request.url ?? '').slice(1)
        ];
      if (body === undefined) response.writeHead(404).end();
      else response.writeHead(200, { 'content-type': 'text/csv' }).end(body);
    });
  });
  afterAll(() => arcep?.close());

  it('serves, and `phone-rep data update` writes the new files into the volume, nowhere else', async (context) => {
    if (!built) return context.skip(`container image not built: ${skipped ?? 'unknown reason'}`);
    const volume = volumeDir('read-only');
    await chownToImageUser(volume);
    const made = await container({ readOnly: true });
    const sites = await startFakeUpstreamSites({ fallback: { ...KNOWN_NUMBER } });
    try {
      const server = await serve(made, { volume, env: { ...sites.env(), HASH_SECRET: SECRET } });
      expect((await fetch(`${server.baseUrl}/health/ready`)).status).toBe(200);
      expect((await fetch(`${server.baseUrl}/api/phone/0612345678`)).status).toBe(200);
      server.terminate();
      // buildah 1.28 cannot clean its mount points out of a read-only root after the command
      // and fails then: the server's own exit is read from its log, not from buildah's status.
      await server.exited;
      expect(server.output()).toMatch(/SIGTERM received: finishing in-flight requests/);
      expect(server.output()).not.toMatch(/EROFS|read-only file system/i);

      expect(existsSync(join(volume, 'arcep'))).toBe(false);
      const update = await made.exec({
        volume,
        command: ['phone-rep', 'data', 'update'],
        env: {
          ARCEP_MAJNUM_URL: `${arcep.url}/MAJNUM.csv`,
          ARCEP_MAJRIO_URL: `${arcep.url}/MAJRIO.csv`,
          ARCEP_IDENTIFIANTS_URL: `${arcep.url}/identifiants_CE.csv`,
        },
      });
      expect(update.stdout, update.stderr).toMatch(
        new RegExp(`^ARCEP data updated in ${VOLUME}/arcep: data date \\d{4}-\\d{2}-\\d{2}`),
      );
      for (const [file, bytes] of Object.entries(served))
        expect(readFileSync(join(volume, 'arcep', file)).equals(bytes), file).toBe(true);
      expect(readdirSync(join(volume, 'arcep')).sort()).toEqual(['MAJNUM.csv', 'MAJRIO.csv', 'identifiants_ce.csv']);
      // What writes into the root is refused, so nothing else was written.
      const write = await made.exec({ command: ['sh', '-c', 'touch /app/probe 2>&1 || echo refused'] });
      expect(write.stdout).toContain('Read-only file system');
    } finally {
      await sites.close();
    }
  }, 300_000);
});

describe("two instances of the image sharing the machine's Redis", () => {
  const prefix = uniqueKeyPrefix('container');
  const admin = connectAdmin();
  afterAll(async () => {
    await deleteKeys(admin, prefix);
    admin.disconnect();
  });

  it('share the rate limit and a cached answer', async (context) => {
    if (!built) return context.skip(`container image not built: ${skipped ?? 'unknown reason'}`);
    const sites = await startFakeUpstreamSites({ fallback: { ...KNOWN_NUMBER } });
    try {
      const env = {
        ...sites.env(),
        HASH_SECRET: SECRET,
        REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
        REDIS_KEY_PREFIX: prefix,
        RATE_LIMIT_MAX: '3',
      };
      const volume = volumeDir('shared');
      await chownToImageUser(volume);
      const [a, b] = await Promise.all([
        serve(await container(), { volume, env }),
        serve(await container(), { volume, env }),
      ]);
      // Both connected to Redis before the first request (readiness says so; /health is not rate limited).
      const redisReady = async (server: ImageServer): Promise<boolean> => {
        const ready = (await (await fetch(`${server.baseUrl}/health/ready`)).json()) as {
          dependencies: { redis?: { status: string } };
        };
        return ready.dependencies.redis?.status === 'ok';
      };
      await waitFor(async () => (await redisReady(a)) && (await redisReady(b)), 20_000);
      const first = await fetch(`${a.baseUrl}/api/phone/0612345678`);
      expect(first.status).toBe(200);
      const asked = sites.total();
      expect(asked).toBeGreaterThan(0);
      // The three results reach Redis after the answer: wait for their keys, as test/scale/scale-out.test.ts does.
      await waitFor(async () => (await listKeys(admin, `${prefix}cache:`)).length >= 3, 10_000);
      const second = await fetch(`${b.baseUrl}/api/phone/0612345678`);
      expect(second.status).toBe(200);
      const body = (await second.json()) as { meta: { sources: Record<string, { cache?: string }> } };
      expect(sites.total(), 'B asked the upstreams again').toBe(asked);
      expect(Object.values(body.meta.sources).map((source) => source.cache)).toEqual(['hit', 'hit', 'hit']);
      // Three requests per window for this client across both instances: the third passes, the fourth is refused.
      expect((await fetch(`${a.baseUrl}/api/phone/0612345678/info`)).status).toBe(200);
      expect((await fetch(`${b.baseUrl}/api/phone/0612345678/info`)).status).toBe(429);
    } finally {
      await sites.close();
    }
  }, 300_000);
});

describe('compose.yaml', () => {
  it("is valid for docker-compose's own `config`, with two replicas of the image, Redis and nginx, each with a health check", async () => {
    const project = mkdtempSync(join(tmpdir(), 'compose-'));
    try {
      copyFileSync(join(ROOT, 'compose.yaml'), join(project, 'compose.yaml'));
      mkdirSync(join(project, 'docker'));
      copyFileSync(join(ROOT, 'docker/nginx.conf'), join(project, 'docker/nginx.conf'));
      // As documented: .env is a copy of .env.example with HASH_SECRET set.
      writeFileSync(
        join(project, '.env'),
        readFileSync(join(ROOT, '.env.example'), 'utf8').replace(/^HASH_SECRET=$/m, `HASH_SECRET=${SECRET}`),
      );
      const env = { ...process.env, HASH_SECRET: undefined };
      const config = await run(
        'docker-compose',
        ['--project-directory', project, '-f', join(project, 'compose.yaml'), 'config'],
        { env },
      );
      expect(config.code, config.stderr).toBe(0);
      const services = await run(
        'docker-compose',
        ['--project-directory', project, '-f', join(project, 'compose.yaml'), 'config', '--services'],
        { env },
      );
      // docker-compose 1.29 lists every service; the default layout is the ones of no profile (the
      // `ha` profile's are test/reliability/compose-ha.test.ts's).
      const block = (name: string): string =>
        new RegExp(`\\n {2}${name}:\\n([\\s\\S]*?)(?=\\n {2}\\S|\\n\\S|$)`).exec(config.stdout)?.[1] ?? '';
      const unprofiled = services.stdout
        .trim()
        .split('\n')
        .filter((name) => !/\n {4}profiles:/.test(`\n${block(name)}`))
        .sort();
      expect(unprofiled).toEqual(['app', 'lb', 'redis']);
      expect(block('app')).toMatch(/replicas: 2/);
      expect(block('app')).toContain('REDIS_URL: redis://redis:6379');
      expect(block('app')).toContain(`HASH_SECRET: ${SECRET}`);
      expect(unprofiled.filter((name) => block(name).includes('healthcheck:'))).toEqual(['app', 'lb', 'redis']);
      // Without HASH_SECRET in .env, compose refuses to start the instances.
      writeFileSync(join(project, '.env'), readFileSync(join(ROOT, '.env.example')));
      const unset = await run(
        'docker-compose',
        ['--project-directory', project, '-f', join(project, 'compose.yaml'), 'config'],
        { env },
      );
      expect(unset.code).not.toBe(0);
      expect(unset.stderr).toContain('set HASH_SECRET in .env');
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
