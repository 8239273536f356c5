// `phone-rep lookup --url` and `batch --url` against a hostile API server on loopback: terminal
// escapes (OSC title, clear screen, a one-byte C1 CSI, bidi overrides, DEL) in every string,
// spreadsheet formulas in every string, arrays and objects where scalars belong, problem bodies
// with forged titles, statuses the API does not publish. Whatever it answers, no control
// character reaches the terminal, no CSV cell is a formula, and an answer that does not match
// the schema the server publishes is an error line, not output.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli/main.js';
import { startLoopbackServer, type LoopbackServer } from '../../harness/loopback.js';

const BIN = fileURLToPath(new URL('../../bin/phone-rep.js', import.meta.url));

const OSC_TITLE = '\u001b]0;pwned\u0007';
const CLEAR = '\u001b[2J';
const C1_CSI = '\u009b31m';
const BIDI = '\u202e';
const DEL = '\u007f';
/** Every string the server sends carries all of them. */
const hostile = (text: string): string => `${OSC_TITLE}${text}${CLEAR}${C1_CSI}${BIDI}${DEL}`;
const FORMULAS = [
  '=HYPERLINK("http://evil.example","x")',
  "=cmd|' /C calc'!A0",
  '@SUM(1+1)*cmd|',
  '+cmd|x',
  '-2+3+cmd|x',
  '\t=1+1',
  '\r=1+1',
];

/** Controls a terminal acts on: C0 (the line break aside), DEL, C1, bidi overrides. */
// eslint-disable-next-line no-control-regex -- asserting their absence
const TERMINAL_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

function phoneInfo(formula = 0): Record<string, unknown> {
  // The formula first, so that the cell would start with it; the escapes after.
  const f = (index: number): string => `${FORMULAS[(formula + index) % FORMULAS.length] ?? ''}${hostile('')}`;
  return { national: f(0), e164: f(1), type: f(2), rangeLabel: f(3), originalCarrier: f(4), region: f(5), isNPV: true };
}

/** A 200 that matches the published schema, with escapes and formulas in every string it may hold. */
function schemaValidReport(): Record<string, unknown> {
  const meta = { status: 'ok', fetchedAt: hostile('2026'), cache: 'miss' };
  return {
    success: true,
    data: {
      // A DEL first: once control characters are gone, the formula leads again.
      number: `${DEL}=HYPERLINK("http://evil.example")${CLEAR}`,
      phoneInfo: phoneInfo(),
      sources: {
        primary: {
          score: 9,
          searches: 10,
          commentsCount: 1,
          commentList: [
            { author: hostile('@me'), text: hostile('=cmd|x'), date: hostile('01/02/2026'), callerType: hostile('+x') },
          ],
        },
        community: {
          dangerPercent: 90,
          visits: 1,
          commentsCount: 1,
          topCategory: hostile('=1'),
          lastCommentDate: hostile('-1'),
          commentList: [{ text: hostile('t'), date: hostile('d'), category: hostile('@c') }],
        },
        signals: {
          spamScore: 80,
          reportsCount: 1,
          callerType: hostile('=c'),
          commentList: [{ text: hostile('t'), date: hostile('d'), callerType: hostile('-c') }],
        },
      },
    },
    meta: {
      sources: { primary: meta, community: { ...meta, status: 'error', reason: 'timeout' }, signals: meta },
      hints: ['npv'],
      score: 9,
      risk: 'suspicious',
      scoreSource: 'primary',
      list: null,
      reports: null,
    },
  };
}

const problem = (
  status: number,
  type: string,
  title: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  type: `/problems/${type}`,
  title,
  status,
  detail: hostile('detail'),
  requestId: hostile('id'),
  success: false,
  error: title,
  ...extra,
});

/** What the server answers, by the number asked: each a different attack. */
const ANSWERS: Record<string, { status: number; body: unknown }> = {
  // Passes the schema: every string is hostile, so every printed one must be cleaned.
  '0600000001': { status: 200, body: schemaValidReport() },
  // Arrays and objects in scalar fields: the formula guard must not be bypassed by a type.
  '0600000002': {
    status: 200,
    body: {
      ...schemaValidReport(),
      data: { ...(schemaValidReport().data as object), number: ['=HYPERLINK("http://evil.example")'] },
    },
  },
  '0600000003': {
    status: 200,
    body: (() => {
      const body = schemaValidReport() as {
        data: { phoneInfo: Record<string, unknown>; sources: { primary: Record<string, unknown> } };
      };
      body.data.phoneInfo.region = ['=cmd|x', '@SUM(1)'];
      body.data.sources.primary.score = ['=1+1'];
      return body;
    })(),
  },
  '0600000004': {
    status: 200,
    body: {
      ...schemaValidReport(),
      meta: {
        sources: {},
        hints: [{ '=x': 1 }],
        score: 9,
        risk: 'suspicious',
        scoreSource: 'primary',
        list: null,
        reports: null,
      },
    },
  },
  // A 502 whose facts are schema-valid strings full of escapes and formulas.
  '0600000005': {
    status: 502,
    body: problem(502, 'all-sources-failed', 'All data sources failed', {
      number: hostile('=1'),
      phoneInfo: phoneInfo(3),
      sources: { primary: hostile('=x'), community: hostile('@y'), signals: hostile('+z') },
      meta: { list: null, reports: null },
    }),
  },
  // Forged titles: the published ones are fixed words.
  '0600000006': { status: 400, body: problem(400, 'invalid-number', hostile('=HYPERLINK("x")')) },
  '0600000007': { status: 429, body: problem(429, 'too-many-requests', [hostile('@SUM(1)')] as unknown as string) },
  // A status the route does not publish, a body that is not JSON.
  '0600000008': { status: 500, body: problem(500, 'boom', hostile('=cmd|x')) },
  '0600000009': { status: 200, body: `${CLEAR}not json` },
};

/** Bytes the endless answer has written, until the client hangs up. */
let endlessSent = 0;

let server: LoopbackServer;
beforeAll(async () => {
  server = await startLoopbackServer((request, response) => {
    const number = decodeURIComponent(request.url.split('/').pop() ?? '');
    if (number === '0600000010') {
      // A body without end, chunked: the CLI must stop reading it, not buffer it.
      response.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = (): void => {
        while (endlessSent < 256 * 1024 * 1024) {
          endlessSent += chunk.length;
          if (!response.write(chunk)) {
            response.once('drain', pump);
            return;
          }
        }
        response.end();
      };
      response.on('close', () => response.removeAllListeners('drain'));
      pump();
      return;
    }
    const answer = ANSWERS[number] ?? { status: 404, body: problem(404, 'not-found', 'Not found') };
    response.writeHead(answer.status, { 'content-type': 'application/json', 'retry-after': '1' });
    response.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
  });
});
afterAll(() => server.close());

function capture(stdin?: string): { io: CliIo; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  async function* lines(): AsyncIterable<string> {
    yield stdin ?? '';
  }
  return { io: { out: (line) => out.push(line), err: (line) => err.push(line), env: {}, stdin: lines() }, out, err };
}

function expectNoControl(lines: string[]): void {
  for (const line of lines) expect(TERMINAL_CONTROL.test(line), JSON.stringify(line)).toBe(false);
}

/** RFC 4180 cells of one CSV line. */
function csvCells(line: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let index = 0; index < line.length; index += 1) {
    const character = line[index];
    if (quoted && character === '"' && line[index + 1] === '"') {
      cell += '"';
      index += 1;
    } else if (character === '"') quoted = !quoted;
    else if (character === ',' && !quoted) {
      cells.push(cell);
      cell = '';
    } else cell += character;
  }
  cells.push(cell);
  return cells;
}

/** A cell a spreadsheet would run: a leading = + - @ tab or CR, unless it is a plain signed number. */
const isFormula = (cell: string): boolean => /^[=+\-@\t\r]/.test(cell) && !/^[+-]?\d[\d ]*$/.test(cell);

describe('phone-rep lookup --url against a hostile server', () => {
  it('prints a schema-valid answer with every control character removed, titles and facts included', async () => {
    const run = capture();
    expect(await runCli(['lookup', '0600000001', '--url', server.url], run.io)).toBe(0);
    const text = run.out.join('\n');
    expect(text).toContain('Verdict: LIKELY UNWANTED (score 9/9');
    expect(text).toContain('Number =HYPERLINK("http://evil.example")[2J');
    expect(text).not.toContain('pwned\u0007');
    expectNoControl([...run.out, ...run.err]);
  });

  it('prints --json as the same value with C1, DEL and bidi controls escaped', async () => {
    const run = capture();
    expect(await runCli(['lookup', '0600000001', '--json', '--url', server.url], run.io)).toBe(0);
    expect(run.out).toHaveLength(1);
    expectNoControl(run.out);
    expect(JSON.parse(run.out[0] ?? '')).toEqual(schemaValidReport());
  });

  it('answers a field of the wrong type with an error line naming the field, and prints nothing of the answer', async () => {
    const cases: Array<[string, RegExp]> = [
      ['0600000002', /does not match the schema the API publishes \(\/data\/number: /],
      ['0600000003', /does not match the schema the API publishes \(\/data\/phoneInfo\/region: /],
      ['0600000004', /does not match the schema the API publishes \(\/meta\/sources/],
      ['0600000006', /HTTP 400 answer does not match the schema the API publishes \(\/title: /],
      ['0600000008', /the server answered HTTP 500, which the API does not publish for a report/],
      ['0600000009', /the server's HTTP 200 answer is not JSON/],
    ];
    for (const [number, problem] of cases) {
      for (const json of [false, true]) {
        const run = capture();
        expect(await runCli(['lookup', number, ...(json ? ['--json'] : []), '--url', server.url], run.io), number).toBe(
          1,
        );
        expect(run.out, number).toEqual([]);
        expect(run.err, number).toHaveLength(1);
        expect(run.err[0], number).toMatch(problem);
        expect(run.err.join('\n')).not.toMatch(/HYPERLINK|cmd\||SUM/);
        expectNoControl(run.err);
      }
    }
    // A 429 is waited out first (Retry-After), then its forged title is refused the same way.
    const limited = capture();
    expect(await runCli(['lookup', '0600000007', '--url', server.url], limited.io)).toBe(1);
    expect(limited.out).toEqual([]);
    expect(limited.err.at(-1)).toMatch(/HTTP 429 answer does not match the schema the API publishes \(\/title: /);
    expectNoControl(limited.err);
  }, 60_000);

  it('stops reading an answer without end at 4 MiB, with an error line', async () => {
    const run = capture();
    expect(await runCli(['lookup', '0600000010', '--url', server.url], run.io)).toBe(1);
    expect(run.out).toEqual([]);
    expect(run.err).toEqual(["phone-rep: the server's answer is larger than 4194304 bytes"]);
    expect(endlessSent).toBeLessThan(64 * 1024 * 1024);
  });

  it('prints the facts of a 502 cleaned, and the reasons', async () => {
    const run = capture();
    expect(await runCli(['lookup', '0600000005', '--url', server.url], run.io)).toBe(3);
    expect(run.err[0]).toBe('All data sources failed');
    expect(run.out.join('\n')).toContain('Number ]0;pwned=1[2J31m');
    expect(run.out.join('\n')).toContain("  Region            =cmd|' /C calc'!A0]0;pwned[2J31m");
    expectNoControl([...run.out, ...run.err]);
  });
});

describe('phone-rep batch --url against a hostile server', () => {
  // The 429 alone is left out: its Retry-After waits would only slow the run.
  const input = `${Object.keys(ANSWERS)
    .filter((number) => number !== '0600000007')
    .join('\n')}\n`;

  it('writes no formula cell and no control character in the CSV, whatever the JSON types were', async () => {
    const run = capture(input);
    expect(await runCli(['batch', '-', '--format', 'csv', '--concurrency', '1', '--url', server.url], run.io)).toBe(0);
    expect(run.out).toHaveLength(Object.keys(ANSWERS).length);
    expectNoControl([...run.out, ...run.err]);
    const rows = run.out.slice(1).map(csvCells);
    for (const cells of rows) {
      expect(cells).toHaveLength(csvCells(run.out[0] ?? '').length);
      for (const cell of cells) expect(isFormula(cell), cell).toBe(false);
    }
    // The hostile strings are there, defused: not dropped, not run.
    expect(rows[0]?.[2]).toBe(`'=HYPERLINK("http://evil.example")[2J`);
    expect(rows[0]?.[4]).toBe(`'=HYPERLINK("http://evil.example","x")]0;pwned[2J31m`);
    expect(rows[0]?.[5]).toBe("'=cmd|' /C calc'!A0]0;pwned[2J31m");
    // The arrays in scalar fields never became cells: those rows are errors naming the field.
    expect(rows[1]).toEqual(expect.arrayContaining(['0600000002', 'error']));
    expect(rows[1]?.at(-1)).toMatch(
      /^the server's HTTP 200 answer does not match the schema the API publishes \(\/data\/number: /,
    );
    expect(rows[2]?.at(-1)).toMatch(/\/data\/phoneInfo\/region: /);
    expect(run.out.slice(1).join('\n')).not.toMatch(/(^|,)"?[=@+-](HYPERLINK|cmd|SUM)/);
  });

  it('writes NDJSON with no raw control character, and the same error rows', async () => {
    const run = capture(input);
    expect(await runCli(['batch', '-', '--format', 'ndjson', '--concurrency', '1', '--url', server.url], run.io)).toBe(
      0,
    );
    expectNoControl([...run.out, ...run.err]);
    const rows = run.out.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows.map((row) => row.status)).toEqual([
      'found',
      'error',
      'error',
      'error',
      'failed',
      'error',
      'error',
      'error',
    ]);
  });
});

describe('the built phone-rep against the hostile server (the bytes a terminal receives)', () => {
  function runBin(args: string[], stdin = ''): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = execFile(
        process.execPath,
        [BIN, ...args],
        {
          env: { PATH: process.env.PATH ?? '', HASH_SECRET: 'test-secret-0123456789', NODE_NO_WARNINGS: '1' },
          timeout: 60_000,
        },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin?.end(stdin);
    });
  }

  it('lookup and batch write no control character but line breaks to stdout and stderr', async () => {
    const lookup = await runBin(['lookup', '0600000001', '--url', server.url]);
    expect(lookup.code).toBe(0);
    const invalid = await runBin(['lookup', '0600000003', '--url', server.url]);
    expect(invalid.code).toBe(1);
    const batch = await runBin(['batch', '-', '--url', server.url], '0600000001\n0600000003\n0600000005\n0600000008\n');
    expect(batch.code).toBe(0);
    for (const output of [lookup.stdout, lookup.stderr, invalid.stdout, invalid.stderr, batch.stdout, batch.stderr]) {
      expect(TERMINAL_CONTROL.test(output), JSON.stringify(output.slice(0, 200))).toBe(false);
    }
    expect(lookup.stdout).toContain('Verdict: LIKELY UNWANTED');
    expect(invalid.stderr).toMatch(/\/data\/phoneInfo\/region: /);
    for (const line of batch.stdout.trim().split('\n').slice(1))
      for (const cell of csvCells(line)) expect(isFormula(cell), cell).toBe(false);
  }, 120_000);
});
