// `phone-rep data update` as an operator's cron job runs it (the built CLI in a child process)
// against a hostile ARCEP server on loopback: a MAJNUM cut cleanly at 12,000 rows, one cut
// mid-row, an endless chunked body, a row dated in the future. Each is refused with exit 1 and
// its reason, and leaves the files in use byte for byte as they were. The child's peak RSS is
// read by a preload from process.resourceUsage() at exit, so the streamed body's bound is the
// process's own figure, not an estimate.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { serveOnLoopback, type LoopbackHttp } from '../../harness/loopback.js';

const BIN = fileURLToPath(new URL('../../bin/phone-rep.js', import.meta.url));
const SNAPSHOT = fileURLToPath(new URL('../../data/arcep', import.meta.url));
const FILES = ['MAJNUM.csv', 'MAJRIO.csv', 'identifiants_ce.csv'] as const;
const majnum = readFileSync(join(SNAPSHOT, 'MAJNUM.csv'));
const majnumLines = majnum.toString('latin1').split('\n');
/** How far the 300 MB body goes, at most. */
const ENDLESS_BYTES = 300 * 1024 * 1024;
/** Peak RSS the endless body may add over a normal update's (the "small peak RSS"). */
const RSS_BOUND_BYTES = 150 * 1024 * 1024;

type Answer = Buffer | 'endless';
let majnumAnswer: Answer = majnum;
let endless = { sent: 0, finished: false };
let server: LoopbackHttp;
let baseUrl = '';
let workDir = '';
let dataDir = '';

/** Writes valid-looking MAJNUM rows, chunked, with backpressure, until 300 MB or the client goes away. */
function streamEndless(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/csv' });
  const block = Buffer.from(majnumLines.slice(1, 2_001).join('\n') + '\n', 'latin1');
  response.write(`${majnumLines[0] ?? ''}\n`);
  const pump = (): void => {
    while (endless.sent < ENDLESS_BYTES) {
      endless.sent += block.length;
      if (!response.write(block)) {
        response.once('drain', pump);
        return;
      }
    }
    endless.finished = true;
    response.end();
  };
  response.on('close', () => response.removeAllListeners('drain'));
  pump();
}

beforeAll(async () => {
  server = await serveOnLoopback((request, response) => {
    const name = (request.url ?? '').slice(1);
    if (name === 'MAJNUM.csv' && majnumAnswer === 'endless') {
      streamEndless(response);
      return;
    }
    const body =
      name === 'MAJNUM.csv'
        ? majnumAnswer
        : FILES.includes(name as (typeof FILES)[number])
          ? readFileSync(join(SNAPSHOT, name))
          : undefined;
    if (!(body instanceof Buffer)) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/csv' }).end(body);
  });
  baseUrl = server.url;
});

afterAll(() => server.close());

beforeEach(() => {
  workDir = mkdtempSync(join(tmpdir(), 'arcep-update-'));
  dataDir = join(workDir, 'arcep');
  cpSync(SNAPSHOT, dataDir, { recursive: true });
  majnumAnswer = majnum;
  endless = { sent: 0, finished: false };
});

afterEach(() => rmSync(workDir, { recursive: true, force: true }));

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
function hashes(dir: string): string[] {
  return FILES.map((name) => sha256(readFileSync(join(dir, name))));
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** Peak resident set size of the child, in bytes. */
  maxRss: number;
}

/** Runs `phone-rep data update` built, with a preload that records the process's peak RSS at exit. */
function runUpdate(): Promise<Run> {
  const rssFile = join(workDir, 'max-rss.txt');
  const preload = join(workDir, 'max-rss.mjs');
  writeFileSync(
    preload,
    [
      "import { writeFileSync } from 'node:fs';",
      // maxRSS is in kibibytes on Linux.
      `process.on('exit', () => writeFileSync(${JSON.stringify(rssFile)}, String(process.resourceUsage().maxRSS * 1024)));`,
    ].join('\n'),
  );
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, 'data', 'update'],
      {
        cwd: workDir,
        timeout: 60_000,
        env: {
          PATH: process.env.PATH ?? '',
          HASH_SECRET: 'test-secret-0123456789',
          NODE_NO_WARNINGS: '1',
          NODE_OPTIONS: `--import=${pathToFileURL(preload).href}`,
          ARCEP_DATA_DIR: dataDir,
          ARCEP_MAJNUM_URL: `${baseUrl}/MAJNUM.csv`,
          ARCEP_MAJRIO_URL: `${baseUrl}/MAJRIO.csv`,
          ARCEP_IDENTIFIANTS_URL: `${baseUrl}/identifiants_ce.csv`,
        },
      },
      (error, stdout, stderr) => {
        resolve({
          code: error ? Number(error.code ?? 1) : 0,
          stdout,
          stderr,
          maxRss: Number(readFileSync(rssFile, 'utf8')),
        });
      },
    );
  });
}

async function expectRefused(reason: string): Promise<Run> {
  const before = hashes(dataDir);
  const run = await runUpdate();
  expect(run.code).toBe(1);
  expect(run.stderr).toContain(`ARCEP data not updated, the previous files are kept: ${reason}`);
  expect(run.stdout).toBe('');
  expect(hashes(dataDir)).toEqual(before);
  expect(readdirSync(dataDir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  return run;
}

describe('phone-rep data update (built CLI) against a hostile ARCEP server', () => {
  it('installs a genuine MAJNUM (the control: the same run succeeds when the files are whole)', async () => {
    majnumAnswer = Buffer.concat([
      majnum,
      Buffer.from('0799999;0799999000;0799999999;FRTE;Métropole;01/05/2026\n', 'latin1'),
    ]);
    const run = await runUpdate();
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('data date 2026-05-01, 19992 MAJNUM rows');
    expect(readFileSync(join(dataDir, 'MAJNUM.csv')).equals(majnumAnswer)).toBe(true);
  });

  it('refuses a MAJNUM cut cleanly at 12,000 of its rows', async () => {
    majnumAnswer = Buffer.from(`${majnumLines.slice(0, 12_001).join('\n')}\n`, 'latin1');
    await expectRefused('MAJNUM.csv: 12000 rows, 40 % fewer than the 19991 in use');
  });

  it('refuses a MAJNUM cut mid-row at 600 KB', async () => {
    majnumAnswer = majnum.subarray(0, 600_000);
    await expectRefused('MAJNUM.csv: incomplete last row (the download was cut short)');
  });

  it('refuses a row dated 31/12/2099 rather than make it the data date', async () => {
    majnumAnswer = Buffer.concat([
      majnum,
      Buffer.from('0799998;0799998000;0799998999;FRTE;Métropole;31/12/2099\n', 'latin1'),
    ]);
    await expectRefused('MAJNUM.csv: a row is dated 2099-12-31, after today');
  });

  it('cuts a chunked 300 MB body at the 20 MiB cap, within 150 MB of peak RSS over a normal update', async () => {
    const baseline = await runUpdate();
    expect(baseline.code).toBe(0);
    majnumAnswer = 'endless';
    const run = await expectRefused('MAJNUM.csv: download failed (file too large (over 20971520 bytes))');
    // The client hung up: the server never got to the end of its 300 MB.
    expect(endless.finished).toBe(false);
    expect(endless.sent).toBeLessThan(ENDLESS_BYTES / 2);
    const figures = `peak RSS: normal update ${(baseline.maxRss / 2 ** 20).toFixed(0)} MiB, 300 MB body ${(run.maxRss / 2 ** 20).toFixed(0)} MiB`;
    expect(run.maxRss - baseline.maxRss, figures).toBeLessThan(RSS_BOUND_BYTES);
  });
});

describe('npm run data:update into the state directory', () => {
  const ROOT = fileURLToPath(new URL('../../', import.meta.url));
  const gitStatus = (): Promise<string> =>
    new Promise((resolve, reject) => {
      execFile('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: ROOT }, (error, stdout) =>
        error ? reject(new Error(`git status: ${error.message}`)) : resolve(stdout),
      );
    });

  it('writes STATE_DIR/arcep, never the tracked snapshot (git status unchanged), and the service then reads that copy', async () => {
    majnumAnswer = Buffer.concat([
      majnum,
      Buffer.from('0799999;0799999000;0799999999;FRTE;Métropole;01/05/2026\n', 'latin1'),
    ]);
    const stateDir = join(workDir, 'state');
    const before = await gitStatus();
    const snapshotBefore = hashes(SNAPSHOT);
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      // --ignore-scripts: the system project built dist/ already (predata:update would build again).
      execFile(
        'npm',
        ['run', '--silent', '--ignore-scripts', 'data:update'],
        {
          cwd: ROOT,
          timeout: 60_000,
          env: {
            PATH: process.env.PATH ?? '',
            NODE_NO_WARNINGS: '1',
            STATE_DIR: stateDir,
            ARCEP_MAJNUM_URL: `${baseUrl}/MAJNUM.csv`,
            ARCEP_MAJRIO_URL: `${baseUrl}/MAJRIO.csv`,
            ARCEP_IDENTIFIANTS_URL: `${baseUrl}/identifiants_ce.csv`,
          },
        },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`ARCEP data updated in ${join(stateDir, 'arcep')}: data date 2026-05-01`);
    expect(readFileSync(join(stateDir, 'arcep', 'MAJNUM.csv')).equals(majnumAnswer)).toBe(true);
    expect(hashes(SNAPSHOT)).toEqual(snapshotBefore);
    expect(await gitStatus()).toBe(before);

    // The service built from the same configuration reads the update, the snapshot only without one.
    const { loadConfig } = await import('../../src/config/config.js');
    const { createServiceDependencies } = await import('../../src/composition.js');
    const { healthyFakeSources } = await import('../../harness/lookup.js');
    for (const [dir, origin, dataDate] of [
      [stateDir, 'updated', '2026-05-01'],
      [join(workDir, 'empty-state'), 'snapshot', '2026-04-17'],
    ] as const) {
      const deps = await createServiceDependencies(
        loadConfig({ STATE_DIR: dir, LISTS_FILE: join(workDir, 'lists.csv') }),
        undefined,
        { sources: healthyFakeSources() },
      );
      expect(deps.numberingData.origin).toBe(origin);
      expect(deps.numberingPlan.dataDate).toBe(dataDate);
      await deps.close();
    }
  });
});
