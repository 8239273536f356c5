// `phone-rep` as a user runs it: lookup in both formats, batch in both formats (duplicates, an
// invalid line), the number's facts when every source failed, info with no network at all,
// the exit codes, --url against a running server (429s honoured, "10 searches" spelt out), and the bin
// launcher from another directory against the upstream sites' fixture pages on loopback.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli, type CliIo } from '../../src/cli/main.js';
import { failed, type SourcesBySlot } from '../../src/domain/ports/source.js';
import { fakeSource, healthyFakeSources, SAMPLE_DATA, type FakeSources } from '../../harness/lookup.js';
import { startFixtureUpstreams, type FixtureUpstreams } from '../../harness/upstream-sites.js';
import { startLoopbackServer } from '../../harness/loopback.js';
import { startTestServer, testNumberingPlan, type TestServer } from '../../harness/servers.js';

const BIN = fileURLToPath(new URL('../../bin/phone-rep.js', import.meta.url));

interface Captured {
  io: CliIo;
  out: string[];
  err: string[];
  progress: string[];
}

function capture(
  options: { sources?: SourcesBySlot; stdin?: string; tty?: boolean; env?: Record<string, string> } = {},
): Captured {
  const out: string[] = [];
  const err: string[] = [];
  const progress: string[] = [];
  const io: CliIo = {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    env: { HASH_SECRET: 'test-secret-0123456789', ...options.env },
    overrides: { numberingPlan: testNumberingPlan(), sources: options.sources ?? healthyFakeSources() },
    ...(options.stdin === undefined ? {} : { stdin: Readable.from([Buffer.from(options.stdin)]) }),
    ...(options.tty === true ? { progress: (text: string) => progress.push(text) } : {}),
  };
  return { io, out, err, progress };
}

function failingSources(): SourcesBySlot {
  return {
    primary: fakeSource('primary', () => failed('timeout')),
    community: fakeSource('community', () => failed('http_5xx')),
    signals: fakeSource('signals', () => failed('connection')),
  };
}

let tempDir: string;
beforeAll(() => {
  tempDir = mkdtempSync(join(tmpdir(), 'phone-rep-cli-'));
});
afterAll(() => rmSync(tempDir, { recursive: true, force: true }));

const BATCH_INPUT = [
  '0612345678',
  '06 12 34 56 78',
  '+33612345678',
  'abc',
  '',
  '# a comment',
  '0698765432',
  '0033698765432',
  '',
].join('\n');

describe('phone-rep lookup (in-process)', () => {
  it("prints the number's facts first, then the verdict, then each source with its comments, and exits 0", async () => {
    const run = capture();
    expect(await runCli(['lookup', '06 12 34 56 78'], run.io)).toBe(0);
    const text = run.out.join('\n');
    expect(run.out[0]?.split('\n')[0]).toBe('Number 0612345678');
    const order = [
      'Number 0612345678',
      'National          06 12 34 56 78',
      'NPV               no',
      'Hints             none',
      'Verdict: LIKELY UNWANTED (score 8/9, suspicious, from the primary source)',
      'Primary (tellows): ok',
      'Appel insistant',
      'Community (numeroinconnu.fr): ok',
      'Toujours le même message',
      'Signals (telguarder): ok',
    ];
    const positions = order.map((needle) => text.indexOf(needle));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  it('--json prints exactly the API body', async () => {
    const server = await startTestServer({
      env: { MAX_EVENT_LOOP_DELAY_MS: '0' },
      overrides: { sources: healthyFakeSources() },
    });
    try {
      const run = capture();
      expect(await runCli(['lookup', '0612345678', '--json'], run.io)).toBe(0);
      expect(run.out).toHaveLength(1);
      const fromCli = JSON.parse(run.out[0] ?? '');
      const fromApi = await (await fetch(`${server.baseUrl}/api/phone/0612345678`)).json();
      const withoutTimes = (body: { meta: { sources: Record<string, { fetchedAt?: string }> } }) => {
        for (const source of Object.values(body.meta.sources)) delete source.fetchedAt;
        return body;
      };
      expect(withoutTimes(fromCli)).toEqual(withoutTimes(fromApi));
    } finally {
      await server.close();
    }
  });

  it('exits 2 with the API message for an invalid number, without asking any source', async () => {
    const sources = healthyFakeSources();
    const run = capture({ sources });
    expect(await runCli(['lookup', '06 12 ab'], run.io)).toBe(2);
    expect(run.err).toEqual(['Invalid phone number format']);
    expect(sources.primary.calls).toBe(0);
    const json = capture();
    expect(await runCli(['lookup', '12', '--json'], json.io)).toBe(2);
    expect(JSON.parse(json.out[0] ?? '')).toMatchObject({ status: 400, title: 'Invalid phone number format' });
  });

  it("still prints the number's facts when every upstream failed, then why each source failed, and exits 3", async () => {
    const run = capture({ sources: failingSources() });
    expect(await runCli(['lookup', '0162005678'], run.io)).toBe(3);
    const facts = run.out.join('\n').split('\n');
    expect(facts[0]).toBe('Number 0162005678');
    expect(facts).toContain('  National          01 62 00 56 78');
    expect(facts).toContain('  International     +33162005678');
    expect(facts).toContain('  NPV               yes, a range reserved for automated calls and messages');
    expect(facts.some((line) => line.startsWith('  Hints             npv: '))).toBe(true);
    expect(facts.join('\n')).not.toContain('Verdict');
    expect(run.err).toEqual([
      'All data sources failed',
      '  Primary (tellows): error (timeout)',
      '  Community (numeroinconnu.fr): error (http_5xx)',
      '  Signals (telguarder): error (connection)',
    ]);
  });

  it('exits 2 on a usage mistake and 1 when the server cannot be reached', async () => {
    const missing = capture();
    expect(await runCli(['lookup'], missing.io)).toBe(2);
    expect(missing.err.join('\n')).toContain('usage: phone-rep lookup <number>');
    expect(await runCli(['lookup', '0612345678', '--colour'], capture().io)).toBe(2);
    const closed = await startLoopbackServer(() => undefined);
    await closed.close();
    const unreachable = capture();
    expect(await runCli(['lookup', '0612345678', '--url', closed.url], unreachable.io)).toBe(1);
    expect(unreachable.err.join('\n')).toMatch(/fetch failed|ECONNREFUSED/);
  });
});

describe('phone-rep batch (in-process)', () => {
  it('writes one CSV row per distinct number, reports the invalid line in its row and exits 0', async () => {
    const file = join(tempDir, 'numbers.txt');
    writeFileSync(file, BATCH_INPUT);
    const sources: FakeSources = healthyFakeSources();
    const run = capture({ sources });
    expect(await runCli(['batch', file], run.io)).toBe(0);
    const [header, ...rows] = run.out;
    expect(header?.split(',').slice(0, 15)).toEqual([
      'line',
      'input',
      'number',
      'status',
      'national',
      'international',
      'line_type',
      'range',
      'original_carrier',
      'region',
      'is_npv',
      'hints',
      'verdict',
      'score',
      'risk',
    ]);
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatch(
      /^1,0612345678,0612345678,found,06 12 34 56 78,\+33612345678,mobile,[^,]*,[^,]*,France,false,,likely unwanted,8,suspicious,primary,ok,8,1234,2,ok,84,2535,1,ok,50,17,$/,
    );
    expect(rows[1]).toBe('4,abc,,invalid,,,,,,,,,,,,,,,,,,,,,,,,Invalid phone number format');
    expect(rows[2]).toMatch(/^7,0698765432,0698765432,found,/);
    // Duplicates cost nothing: one lookup per distinct valid number.
    expect(sources.primary.calls).toBe(2);
    expect(run.err).toEqual(['3 numbers: 2 found, 1 invalid, 0 failed, 0 errors; 3 duplicate lines skipped']);
  });

  it('reads standard input with -, writes NDJSON, and draws a progress bar on a terminal', async () => {
    const run = capture({ stdin: BATCH_INPUT, tty: true });
    expect(await runCli(['batch', '-', '--format', 'ndjson', '--concurrency', '2'], run.io)).toBe(0);
    const rows = run.out.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows.map((row) => [row.line, row.number, row.status])).toEqual([
      [1, '0612345678', 'found'],
      [4, null, 'invalid'],
      [7, '0698765432', 'found'],
    ]);
    expect(rows[0]).toMatchObject({
      verdict: 'likely unwanted',
      score: 8,
      risk: 'suspicious',
      community_danger_percent: 84,
      signals_spam_score: 50,
    });
    expect(run.progress.join('')).toContain('] 3/3');
  });

  it('reports each source failure in the row when every upstream failed, fills its facts columns all the same, and goes on', async () => {
    const run = capture({ sources: failingSources(), stdin: '0612345678\n01 62 00 56 78\n' });
    expect(await runCli(['batch', '-', '--format', 'ndjson'], run.io)).toBe(0);
    expect(JSON.parse(run.out[0] ?? '')).toMatchObject({
      number: '0612345678',
      status: 'failed',
      national: '06 12 34 56 78',
      international: '+33612345678',
      line_type: 'mobile',
      is_npv: false,
      hints: [],
      score: null,
      primary_status: 'error:timeout',
      community_status: 'error:http_5xx',
      signals_status: 'error:connection',
    });
    expect(JSON.parse(run.out[1] ?? '')).toMatchObject({
      number: '0162005678',
      status: 'failed',
      national: '01 62 00 56 78',
      is_npv: true,
      hints: ['npv'],
    });
    expect(run.err).toEqual(['2 numbers: 0 found, 0 invalid, 2 failed, 0 errors; 0 duplicate lines skipped']);
  });

  it('exits 2 for an unreadable file or a bad option', async () => {
    const run = capture();
    expect(await runCli(['batch', join(tempDir, 'missing.txt')], run.io)).toBe(2);
    expect(run.err[0]).toContain('ENOENT');
    expect(await runCli(['batch', '-', '--format', 'xml'], capture({ stdin: '' }).io)).toBe(2);
    expect(await runCli(['batch', '-', '--concurrency', '0'], capture({ stdin: '' }).io)).toBe(2);
  });
});

/** Counts connection attempts made through node:net (which fetch, undici, ioredis and http all use) while `run` runs. */
async function countConnectionAttempts(run: () => Promise<void>): Promise<number> {
  const spy = vi.spyOn(net.Socket.prototype, 'connect');
  try {
    await run();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

describe('phone-rep info (no network)', () => {
  /** Every address the CLI could be told about points at a port nothing listens on. */
  let closedUrl: string;
  beforeAll(async () => {
    const closed = await startLoopbackServer(() => undefined);
    await closed.close();
    closedUrl = closed.url;
  });
  const offlineEnv = (): Record<string, string> => ({
    TELLOWS_API_URL: closedUrl,
    TELLOWS_WEB_URL: closedUrl,
    NUMEROINCONNU_URL: closedUrl,
    TELGUARDER_URL: closedUrl,
    REDIS_URL: `redis://${closedUrl.replace(/^http:\/\//, '')}`,
  });

  it('prints the facts of an NPV number with its hint, and opens no connection', async () => {
    const run = capture({ env: offlineEnv() });
    let code: number | undefined;
    const attempts = await countConnectionAttempts(async () => {
      code = await runCli(['info', '01 62 00 56 78'], run.io);
    });
    expect(code).toBe(0);
    expect(attempts).toBe(0);
    const lines = run.out.join('\n').split('\n');
    expect(lines[0]).toBe('Number 0162005678');
    expect(lines).toContain('  International     +33162005678');
    expect(lines).toContain('  NPV               yes, a range reserved for automated calls and messages');
    expect(lines.some((line) => line.startsWith('  Hints             npv: '))).toBe(true);
    expect(run.err).toEqual([]);
  });

  it('the connection counter sees the attempts a lookup makes, so its zero for info means something', async () => {
    const run = capture({ env: offlineEnv(), sources: failingSources() });
    run.io.overrides = { numberingPlan: testNumberingPlan() };
    const attempts = await countConnectionAttempts(async () => {
      expect(await runCli(['lookup', '0612345678'], run.io)).toBe(3);
    });
    expect(attempts).toBeGreaterThan(0);
  });

  it('--json prints the body of GET /api/phone/{number}/info', async () => {
    const run = capture({ env: offlineEnv() });
    expect(await runCli(['info', '+33 9 37 00 12 34', '--json'], run.io)).toBe(0);
    expect(run.out).toHaveLength(1);
    const body = JSON.parse(run.out[0] ?? '') as {
      success: boolean;
      data: { number: string; phoneInfo: Record<string, unknown> };
    };
    expect(body.success).toBe(true);
    expect(Object.keys(body.data).sort()).toEqual(['number', 'phoneInfo']);
    expect(body.data.number).toBe('0937001234');
    expect(Object.keys(body.data.phoneInfo).sort()).toEqual([
      'e164',
      'isNPV',
      'national',
      'originalCarrier',
      'rangeLabel',
      'region',
      'type',
    ]);
    expect(body.data.phoneInfo).toMatchObject({ e164: '+33937001234', isNPV: false });
  });

  it('shows the technical_platform hint for a technical-platform number and none for an ordinary mobile', async () => {
    const platform = capture();
    expect(await runCli(['info', '0937001234'], platform.io)).toBe(0);
    expect(platform.out.join('\n')).toMatch(/Hints {13}technical_platform: /);
    const mobile = capture();
    expect(await runCli(['info', '0612345678'], mobile.io)).toBe(0);
    expect(mobile.out.join('\n')).toContain('  Hints             none');
  });

  it('exits 2 for an invalid number or a usage mistake, printing nothing on stdout', async () => {
    const invalid = capture();
    expect(await runCli(['info', '06 12 ab'], invalid.io)).toBe(2);
    expect(invalid.err).toEqual(['Invalid phone number format']);
    expect(invalid.out).toEqual([]);
    const missing = capture();
    expect(await runCli(['info'], missing.io)).toBe(2);
    expect(missing.err.join('\n')).toContain('usage: phone-rep info <number>');
    expect(await runCli(['info', '0612345678', '--url', closedUrl], capture().io)).toBe(2);
  });

  it('works in a process where every connection attempt and DNS lookup throws', async () => {
    // A preload that makes the network impossible and records each attempt in a file at exit.
    // Unix-domain sockets are local IPC, not network (tsx's loader looks for its parent's pipe
    // through one), so they alone go through; any TCP connection or DNS lookup throws.
    const attemptsFile = join(tempDir, 'connection-attempts.txt');
    const preload = join(tempDir, 'no-network.mjs');
    writeFileSync(
      preload,
      [
        "import net from 'node:net';",
        "import dns from 'node:dns';",
        "import { writeFileSync } from 'node:fs';",
        'const attempts = [];',
        'const originalConnect = net.Socket.prototype.connect;',
        'const isUnixSocket = (args) => { const first = Array.isArray(args[0]) ? args[0][0] : args[0]; return (typeof first === "object" && first !== null && typeof first.path === "string") || (typeof first === "string" && !/^\\d+$/.test(first)); };',
        'net.Socket.prototype.connect = function (...args) { if (isUnixSocket(args)) return originalConnect.apply(this, args); attempts.push("connect " + JSON.stringify(args[0])); throw new Error("no network in this test"); };',
        'dns.lookup = function () { attempts.push("dns"); throw new Error("no DNS in this test"); };',
        'dns.promises.lookup = async function () { attempts.push("dns"); throw new Error("no DNS in this test"); };',
        `process.on('exit', () => writeFileSync(${JSON.stringify(attemptsFile)}, attempts.join(',') || 'none'));`,
      ].join('\n'),
    );
    const nodeOptions = `--import=${pathToFileURL(preload).href}`;
    const info = await runBin(['info', '0162005678'], { env: { ...offlineEnv(), NODE_OPTIONS: nodeOptions } });
    expect(info.stderr).toBe('');
    expect(info.code).toBe(0);
    expect(info.stdout).toMatch(/^Number 0162005678\n/);
    expect(info.stdout).toContain('NPV               yes');
    expect(readFileSync(attemptsFile, 'utf8')).toBe('none');

    // The same preload in a lookup: the guard is live, and the facts still come out, exit 3.
    const lookup = await runBin(['lookup', '0162005678'], {
      env: { ...offlineEnv(), REDIS_URL: '', NODE_OPTIONS: nodeOptions },
    });
    expect(readFileSync(attemptsFile, 'utf8')).not.toBe('none');
    expect(lookup.code).toBe(3);
    expect(lookup.stdout).toMatch(/^Number 0162005678\n/);
    expect(lookup.stderr).toMatch(/^All data sources failed\n/);
  }, 120_000);
});

describe("phone-rep against a server whose 502 carries the number's facts (--url)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { MAX_EVENT_LOOP_DELAY_MS: '0' }, overrides: { sources: failingSources() } });
  });
  afterAll(async () => {
    await server.close();
  });

  it("lookup prints the facts from the 502 body, then each source's reason, and exits 3", async () => {
    const run = capture();
    expect(await runCli(['lookup', '0162005678', '--url', server.baseUrl], run.io)).toBe(3);
    expect(run.out.join('\n')).toMatch(/^Number 0162005678\n {2}National {10}01 62 00 56 78\n/);
    expect(run.err).toEqual([
      'All data sources failed',
      '  Primary (tellows): error (timeout)',
      '  Community (numeroinconnu.fr): error (http_5xx)',
      '  Signals (telguarder): error (connection)',
    ]);
  });

  it('batch fills the facts columns of failed rows from the 502 body', async () => {
    const run = capture({ stdin: '0162005678\n0612345678\n' });
    expect(await runCli(['batch', '-', '--format', 'ndjson', '--url', server.baseUrl], run.io)).toBe(0);
    const rows = run.out.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows[0]).toMatchObject({
      number: '0162005678',
      status: 'failed',
      international: '+33162005678',
      is_npv: true,
      hints: ['npv'],
    });
    expect(rows[1]).toMatchObject({
      number: '0612345678',
      status: 'failed',
      international: '+33612345678',
      is_npv: false,
      hints: [],
    });
  });
});

describe('phone-rep against a running server (--url)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: { RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_S: '1', MAX_EVENT_LOOP_DELAY_MS: '0' },
      overrides: { sources: healthyFakeSources() },
    });
  });
  afterAll(() => server.close());

  it('honours 429 Retry-After in a batch and still gets every row', async () => {
    const run = capture({ stdin: '0612345678\n0698765432\n0611111111\n0622222222\n' });
    expect(
      await runCli(['batch', '-', '--format', 'ndjson', '--concurrency', '1', '--url', server.baseUrl], run.io),
    ).toBe(0);
    expect(run.out.map((line) => (JSON.parse(line) as { status: string }).status)).toEqual([
      'found',
      'found',
      'found',
      'found',
    ]);
    expect(run.err.some((line) => line.startsWith('rate limited by the server: waiting'))).toBe(true);
  });
});

describe('phone-rep lookup --url words its counts in full (issue 20, item 6f)', () => {
  let server: TestServer;
  beforeAll(async () => {
    const sources = healthyFakeSources();
    // One search for 0612345601, ten for any other number: the singular and an "-es" plural.
    sources.primary.respond = (number) => ({
      status: 'ok',
      data: { ...structuredClone(SAMPLE_DATA.primary), searches: number.number === '0612345601' ? 1 : 10 },
    });
    server = await startTestServer({ env: { RATE_LIMIT_MAX: '0' }, overrides: { sources } });
  });
  afterAll(() => server.close());

  it('prints "10 searches" and "1 search" from the server\'s answer, never "searchs"', async () => {
    const ten = capture();
    expect(await runCli(['lookup', '0612345610', '--url', server.baseUrl], ten.io)).toBe(0);
    const one = capture();
    expect(await runCli(['lookup', '0612345601', '--url', server.baseUrl], one.io)).toBe(0);
    expect(ten.out.join('\n')).toMatch(/^ {2}score 8 · 10 searches · 2 comments$/m);
    expect(one.out.join('\n')).toMatch(/^ {2}score 8 · 1 search · 2 comments$/m);
    expect([...ten.out, ...one.out].join('\n')).not.toContain('searchs');
  });
});

function runBin(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: tmpdir(),
        env: {
          PATH: process.env.PATH ?? '',
          HASH_SECRET: 'test-secret-0123456789',
          NODE_NO_WARNINGS: '1',
          ...options.env,
        },
        timeout: 60_000,
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(options.stdin ?? '');
  });
}

describe('the phone-rep launcher (bin/phone-rep.js) from another directory', () => {
  let upstreams: FixtureUpstreams;
  beforeAll(async () => {
    upstreams = await startFixtureUpstreams();
  });
  afterAll(() => upstreams.close());

  it('looks a number up in-process against the upstream sites on loopback, and batches from stdin', async () => {
    const lookup = await runBin(['lookup', '0612345678'], { env: upstreams.env });
    expect(lookup.stderr).toBe('');
    expect(lookup.code).toBe(0);
    expect(lookup.stdout).toMatch(/^Number 0612345678\n/);
    expect(lookup.stdout).toContain('Verdict: ');
    expect(lookup.stdout).toContain('Primary (tellows): ok');
    expect(lookup.stdout).toContain('Community (numeroinconnu.fr): ok');
    expect(lookup.stdout).toContain('Signals (telguarder): ok');

    const batch = await runBin(['batch', '-', '--format', 'csv'], {
      env: upstreams.env,
      stdin: '0612345678\nnot a number\n06.12.34.56.78\n',
    });
    expect(batch.code).toBe(0);
    const lines = batch.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/^1,0612345678,0612345678,found,/);
    expect(lines[2]).toMatch(/^2,not a number,,invalid,/);
    expect(lines[1]).toMatch(/^1,0612345678,0612345678,found,06 12 34 56 78,\+33612345678,mobile,/);
  }, 120_000);

  it('exits 2 for an invalid number and 3 when every upstream fails', async () => {
    expect((await runBin(['lookup', '06 12 ab'], { env: upstreams.env })).code).toBe(2);
    upstreams.answerWith('tellows', { status: 500 });
    upstreams.answerWith('numeroinconnu', { status: 500 });
    upstreams.answerWith('telguarder', { status: 500 });
    const failedRun = await runBin(['lookup', '0698765432'], { env: upstreams.env });
    expect(failedRun.code).toBe(3);
    expect(failedRun.stdout).toMatch(/^Number 0698765432\n/);
    expect(failedRun.stderr.split('\n')[0]).toBe('All data sources failed');
    expect(failedRun.stderr).toContain('  Primary (tellows): error (');
  }, 120_000);
});

describe('phone-rep canary and data, dispatched by the same command table', () => {
  let upstreams: FixtureUpstreams;
  beforeAll(async () => {
    upstreams = await startFixtureUpstreams();
  });
  afterAll(() => upstreams.close());

  it('canary exits 0 when the (loopback) upstream pages carry their markers, 1 when a challenge page answers', async () => {
    const healthy = capture({ env: upstreams.env });
    expect(await runCli(['canary', '0612345678'], healthy.io)).toBe(0);
    expect(healthy.out.at(-1)).toBe('canary: all upstreams answered and every required marker was found');
    expect(healthy.out.join('\n')).not.toContain('0612345678');
    upstreams.answerWith('tellows', { fixture: 'page-challenge.html' });
    const challenged = capture({ env: upstreams.env });
    expect(await runCli(['canary', '0612345678'], challenged.io)).toBe(1);
    expect(challenged.out.join('\n')).toContain('MISSING');
  });

  it('data info names the ARCEP data in use, from any directory', async () => {
    const run = capture();
    expect(await runCli(['data', 'info'], run.io)).toBe(0);
    expect(run.out[0]).toMatch(
      /^ARCEP data in .*data\/arcep \(the snapshot shipped in the package\): data date \d{4}-\d{2}-\d{2}, \d+ number blocks/,
    );
  });
});
