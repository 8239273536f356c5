import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { serveOnLoopback, type LoopbackHttp } from '../../../harness/loopback.js';
import { updateArcepData } from './update-arcep-data.js';
import { loadNumberingPlan } from './load-numbering-plan.js';
import { loadConfig } from '../../config/config.js';
import { runCli } from '../../cli/main.js';

const SNAPSHOT = 'data/arcep';
const original = {
  majnum: readFileSync(join(SNAPSHOT, 'MAJNUM.csv')),
  majrio: readFileSync(join(SNAPSHOT, 'MAJRIO.csv')),
  identifiants: readFileSync(join(SNAPSHOT, 'identifiants_ce.csv')),
};
// A newer MAJNUM: one more block, allocated after the snapshot's newest date (Latin-1 bytes).
const newerMajnum = Buffer.concat([
  original.majnum,
  Buffer.from('0799999;0799999000;0799999999;FRTE;Métropole;01/05/2026\n', 'latin1'),
]);

type Served = { status: number; body: Buffer } | 'hang';
let routes: Record<string, Served> = {};
let server: LoopbackHttp;
let baseUrl = '';
let dir = '';

beforeAll(async () => {
  server = await serveOnLoopback((request, response) => {
    const served = routes[request.url ?? ''];
    if (served === 'hang') return;
    if (!served) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(served.status, { 'content-type': 'text/csv' }).end(served.body);
  });
  baseUrl = server.url;
});

afterAll(() => server.close());

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'arcep-'));
  cpSync(SNAPSHOT, dir, { recursive: true });
  routes = {
    '/MAJNUM.csv': { status: 200, body: newerMajnum },
    '/MAJRIO.csv': { status: 200, body: original.majrio },
    '/identifiants_ce.csv': { status: 200, body: original.identifiants },
  };
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function urls(): { majnum: string; majrio: string; identifiants: string } {
  return {
    majnum: `${baseUrl}/MAJNUM.csv`,
    majrio: `${baseUrl}/MAJRIO.csv`,
    identifiants: `${baseUrl}/identifiants_ce.csv`,
  };
}

function expectUntouched(): void {
  expect(readFileSync(join(dir, 'MAJNUM.csv')).equals(original.majnum)).toBe(true);
  expect(readFileSync(join(dir, 'MAJRIO.csv')).equals(original.majrio)).toBe(true);
  expect(readFileSync(join(dir, 'identifiants_ce.csv')).equals(original.identifiants)).toBe(true);
  expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
}

describe('updateArcepData', () => {
  it('swaps in valid downloads byte for byte and reports their date and row counts', async () => {
    const result = await updateArcepData({ dir, urls: urls() });
    expect(result).toEqual({
      ok: true,
      dataDate: '2026-05-01',
      rows: { majnum: 19_992, majrio: 236, identifiants: 1554 },
      majrio: { status: 'updated' },
    });
    expect(readFileSync(join(dir, 'MAJNUM.csv')).equals(newerMajnum)).toBe(true);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('keeps the old files when a download answers 500', async () => {
    routes['/identifiants_ce.csv'] = { status: 500, body: Buffer.from('oops') };
    expect(await updateArcepData({ dir, urls: urls() })).toEqual({
      ok: false,
      reason: 'identifiants_ce.csv: download failed (HTTP 500)',
    });
    expectUntouched();
  });

  it('updates MAJNUM and identifiants_CE and keeps the previous MAJRIO when only MAJRIO cannot be fetched', async () => {
    delete routes['/MAJRIO.csv'];
    const result = await updateArcepData({ dir, urls: urls() });
    expect(result).toEqual({
      ok: true,
      dataDate: '2026-05-01',
      rows: { majnum: 19_992, majrio: 236, identifiants: 1554 },
      majrio: { status: 'kept', reason: 'MAJRIO.csv: download failed (HTTP 404)' },
    });
    expect(readFileSync(join(dir, 'MAJNUM.csv')).equals(newerMajnum)).toBe(true);
    expect(readFileSync(join(dir, 'MAJRIO.csv')).equals(original.majrio)).toBe(true);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it("keeps the previous MAJRIO when the downloaded one is not ARCEP's, and still updates the others", async () => {
    routes['/MAJRIO.csv'] = { status: 200, body: Buffer.from('<html>not found</html>\n', 'latin1') };
    const result = await updateArcepData({ dir, urls: urls() });
    expect(result).toMatchObject({
      ok: true,
      dataDate: '2026-05-01',
      majrio: { status: 'kept', reason: 'MAJRIO.csv: unexpected header' },
    });
    expect(readFileSync(join(dir, 'MAJNUM.csv')).equals(newerMajnum)).toBe(true);
    expect(readFileSync(join(dir, 'MAJRIO.csv')).equals(original.majrio)).toBe(true);
  });

  it('writes a header-only MAJRIO when none existed and MAJRIO cannot be fetched, so the plan still loads with names from identifiants_CE', async () => {
    rmSync(join(dir, 'MAJRIO.csv'));
    delete routes['/MAJRIO.csv'];
    const result = await updateArcepData({ dir, urls: urls() });
    expect(result).toMatchObject({ ok: true, rows: { majrio: 0 }, majrio: { status: 'empty' } });
    const plan = loadNumberingPlan(dir, { foreignCarriers: false });
    expect(plan.dataDate).toBe('2026-05-01');
    expect(plan.blockCount).toBe(19_730);
  });

  it("keeps the old files when a header is not ARCEP's", async () => {
    routes['/MAJNUM.csv'] = {
      status: 200,
      body: Buffer.from(newerMajnum.toString('latin1').replace('Mnémo', 'Operateur'), 'latin1'),
    };
    expect(await updateArcepData({ dir, urls: urls() })).toEqual({
      ok: false,
      reason: 'MAJNUM.csv: unexpected header',
    });
    expectUntouched();
  });

  it('keeps the old files when MAJNUM has too few rows', async () => {
    const truncated = newerMajnum.toString('latin1').split('\n').slice(0, 5_000).join('\n');
    routes['/MAJNUM.csv'] = { status: 200, body: Buffer.from(truncated, 'latin1') };
    expect(await updateArcepData({ dir, urls: urls() })).toEqual({
      ok: false,
      reason: 'MAJNUM.csv: 4999 rows, expected 10000–60000',
    });
    expectUntouched();
  });

  it('keeps the old files when MAJNUM is cut cleanly at 12,000 of its rows (more than 5 % fewer than in use), and --force installs it', async () => {
    const lines = newerMajnum.toString('latin1').split('\n');
    const truncated = Buffer.from(`${lines.slice(0, 12_001).join('\n')}\n`, 'latin1');
    routes['/MAJNUM.csv'] = { status: 200, body: truncated };
    expect(await updateArcepData({ dir, urls: urls() })).toEqual({
      ok: false,
      reason:
        'MAJNUM.csv: 12000 rows, 40 % fewer than the 19991 in use (a drop of more than 5 % is refused; data update --force installs it anyway)',
    });
    expectUntouched();
    expect(await updateArcepData({ dir, urls: urls(), force: true })).toMatchObject({
      ok: true,
      rows: { majnum: 12_000 },
    });
    expect(readFileSync(join(dir, 'MAJNUM.csv')).equals(truncated)).toBe(true);
  });

  it('accepts a MAJNUM up to 5 % shorter than the one in use (blocks are withdrawn now and then)', async () => {
    const lines = original.majnum.toString('latin1').split('\n');
    const shorter = Buffer.from(`${lines.slice(0, 1 + 19_000).join('\n')}\n`, 'latin1');
    routes['/MAJNUM.csv'] = { status: 200, body: shorter };
    expect(await updateArcepData({ dir, urls: urls() })).toMatchObject({ ok: true, rows: { majnum: 19_000 } });
  });

  it('keeps the old files when MAJNUM is cut mid-row', async () => {
    const cut = newerMajnum.subarray(0, 600_000);
    expect(cut.at(-1)).not.toBe(0x0a);
    routes['/MAJNUM.csv'] = { status: 200, body: cut };
    expect(await updateArcepData({ dir, urls: urls() })).toEqual({
      ok: false,
      reason: 'MAJNUM.csv: incomplete last row (the download was cut short)',
    });
    expectUntouched();
    // Cut inside the date of the last row: every column is there, the date is not whole.
    routes['/MAJNUM.csv'] = { status: 200, body: newerMajnum.subarray(0, newerMajnum.length - 3) };
    expect(await updateArcepData({ dir, urls: urls() })).toEqual({
      ok: false,
      reason: 'MAJNUM.csv: incomplete last row (the download was cut short)',
    });
    expectUntouched();
  });

  it('keeps the old files when identifiants_CE is cut mid-row, and the previous MAJRIO when MAJRIO is', async () => {
    routes['/identifiants_ce.csv'] = {
      status: 200,
      body: original.identifiants.subarray(0, original.identifiants.length - 20),
    };
    expect(await updateArcepData({ dir, urls: urls() })).toEqual({
      ok: false,
      reason: 'identifiants_ce.csv: incomplete last row (the download was cut short)',
    });
    expectUntouched();
    routes['/identifiants_ce.csv'] = { status: 200, body: original.identifiants };
    routes['/MAJRIO.csv'] = { status: 200, body: original.majrio.subarray(0, original.majrio.length - 1) };
    expect(await updateArcepData({ dir, urls: urls() })).toMatchObject({
      ok: true,
      majrio: { status: 'kept', reason: 'MAJRIO.csv: incomplete last row (the download was cut short)' },
    });
    expect(readFileSync(join(dir, 'MAJRIO.csv')).equals(original.majrio)).toBe(true);
  });

  it('accepts a last row without a final line break when it is visibly whole (every column, a full date)', async () => {
    routes['/MAJNUM.csv'] = { status: 200, body: newerMajnum.subarray(0, newerMajnum.length - 1) };
    expect(await updateArcepData({ dir, urls: urls() })).toMatchObject({ ok: true, dataDate: '2026-05-01' });
  });

  it('keeps the old files when a MAJNUM row is dated in the future, whatever --force says', async () => {
    const future = Buffer.concat([
      original.majnum,
      Buffer.from('0799998;0799998000;0799998999;FRTE;Métropole;31/12/2099\n', 'latin1'),
    ]);
    routes['/MAJNUM.csv'] = { status: 200, body: future };
    const now = () => new Date('2026-11-24T12:00:00Z');
    const refused = { ok: false, reason: 'MAJNUM.csv: a row is dated 2099-12-31, after today (2026-11-24)' };
    expect(await updateArcepData({ dir, urls: urls(), now })).toEqual(refused);
    expect(await updateArcepData({ dir, urls: urls(), now, force: true })).toEqual(refused);
    expectUntouched();
    // Today itself is not the future: ARCEP dates an allocation the day it is decided.
    routes['/MAJNUM.csv'] = { status: 200, body: newerMajnum };
    expect(await updateArcepData({ dir, urls: urls(), now: () => new Date('2026-05-01T06:00:00Z') })).toMatchObject({
      ok: true,
      dataDate: '2026-05-01',
    });
  });

  it('keeps the old files when a file passes the size cap, announced or chunked', async () => {
    const chunked = await serveOnLoopback((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/csv' });
      // No content-length: the cap can only be applied while the bytes arrive.
      response.write(newerMajnum.subarray(0, 700_000));
      response.end(newerMajnum.subarray(700_000));
    });
    try {
      const url = `${chunked.url}/MAJNUM.csv`;
      const cap = 1_000_000;
      expect(await updateArcepData({ dir, urls: { ...urls(), majnum: url }, maxFileBytes: cap })).toEqual({
        ok: false,
        reason: `MAJNUM.csv: download failed (file too large (over ${cap} bytes))`,
      });
      expectUntouched();
      expect(await updateArcepData({ dir, urls: urls(), maxFileBytes: cap })).toEqual({
        ok: false,
        reason: `MAJNUM.csv: download failed (file too large (over ${cap} bytes))`,
      });
      expectUntouched();
      expect(await updateArcepData({ dir, urls: { ...urls(), majnum: url }, maxFileBytes: 2_000_000 })).toMatchObject({
        ok: true,
      });
    } finally {
      await chunked.close();
    }
  });

  it('keeps the old files when a file arrives re-encoded as UTF-8', async () => {
    routes['/identifiants_ce.csv'] = {
      status: 200,
      body: Buffer.from(original.identifiants.toString('latin1'), 'utf8'),
    };
    expect(await updateArcepData({ dir, urls: urls() })).toEqual({
      ok: false,
      reason: 'identifiants_ce.csv: UTF-8 content where Latin-1 was expected',
    });
    expectUntouched();
  });

  it("creates a missing directory (the state directory's arcep/ before the first update), compared with the data in use", async () => {
    const fresh = join(dir, 'state', 'arcep');
    const result = await updateArcepData({ dir: fresh, inUseDir: dir, urls: urls() });
    expect(result).toMatchObject({ ok: true, dataDate: '2026-05-01' });
    expect(readdirSync(fresh).sort()).toEqual(['MAJNUM.csv', 'MAJRIO.csv', 'identifiants_ce.csv']);
    expectUntouched();
  });

  it('fails with a reason, and leaves no temporary file, when the directory cannot be made (a file in its way)', async () => {
    const blocked = join(dir, 'MAJNUM.csv', 'arcep');
    expect(await updateArcepData({ dir: blocked, urls: urls() })).toEqual({
      ok: false,
      reason: `cannot write into ${blocked}`,
    });
    expectUntouched();
  });

  it('keeps the old files when a download does not answer in time', async () => {
    routes['/MAJNUM.csv'] = 'hang';
    expect(await updateArcepData({ dir, urls: urls(), fetchTimeoutMs: 300 })).toEqual({
      ok: false,
      reason: 'MAJNUM.csv: download failed (timeout)',
    });
    expectUntouched();
  });
});

describe('ARCEP download defaults', () => {
  it('are the addresses ARCEP publishes the files at (identifiants_CE with its capitals)', () => {
    const config = loadConfig({});
    expect([config.ARCEP_MAJNUM_URL, config.ARCEP_IDENTIFIANTS_URL, config.ARCEP_MAJRIO_URL]).toEqual([
      'https://extranet.arcep.fr/uploads/MAJNUM.csv',
      'https://extranet.arcep.fr/uploads/identifiants_CE.csv',
      'https://extranet.arcep.fr/uploads/MAJRIO.csv',
    ]);
  });
});

describe('phone-rep data', () => {
  function capture(env: Record<string, string>): { io: Parameters<typeof runCli>[1]; out: string[]; err: string[] } {
    const out: string[] = [];
    const err: string[] = [];
    return { io: { out: (line) => out.push(line), err: (line) => err.push(line), env }, out, err };
  }
  function env(): Record<string, string> {
    const { majnum, majrio, identifiants } = urls();
    return {
      ARCEP_DATA_DIR: dir,
      ARCEP_MAJNUM_URL: majnum,
      ARCEP_MAJRIO_URL: majrio,
      ARCEP_IDENTIFIANTS_URL: identifiants,
    };
  }

  it('`data update` exits 0 after a successful update and `data info` shows the new date', async () => {
    const update = capture(env());
    expect(await runCli(['data', 'update'], update.io)).toBe(0);
    expect(update.out.join('\n')).toContain('data date 2026-05-01');
    const info = capture(env());
    expect(await runCli(['data', 'info'], info.io)).toBe(0);
    expect(info.out[0]).toBe(`ARCEP data in ${dir}: data date 2026-05-01, 19730 number blocks (Source : ARCEP)`);
  });

  it('`data update` and `data info` list the new blocks of call-centre operators and under the NPV prefixes, and the unverified NPV candidates', async () => {
    routes['/MAJNUM.csv'] = {
      status: 200,
      body: Buffer.concat([
        original.majnum,
        Buffer.from(
          [
            '0189799;0189799000;0189799999;AIRC;Métropole;02/05/2026', // a call-centre operator's fixed block
            '0744999;0744999000;0744999999;ONOF;Métropole;03/05/2026', // one of its mobile blocks
            '0162999;0162999000;0162999999;FRTE;Métropole;04/05/2026', // under an NPV prefix
            '0799999;0799999000;0799999999;FRTE;Métropole;05/05/2026', // neither
            '',
          ].join('\n'),
          'latin1',
        ),
      ]),
    };
    const update = capture(env());
    expect(await runCli(['data', 'update'], update.io)).toBe(0);
    const expected = [
      'New blocks of call-centre operators since the previous data (data date 2026-04-17): 2',
      '  0189799  AIRC  Aircall, Métropole, allocated 2026-05-02',
      '  0744999  ONOF  Onoff telecom, Métropole, allocated 2026-05-03 (mobile block: no call_centre_operator hint)',
      'New blocks under the NPV prefixes since the previous data (data date 2026-04-17): 1',
      '  0162999  FRTE  Orange, Métropole, allocated 2026-05-04',
    ];
    expect(update.out.slice(1, 6)).toEqual(expected);
    expect(update.out.join('\n')).not.toContain('0799999');
    expect(update.out[6]).toMatch(
      /^Unverified NPV candidates \(shown, never added; .*list add '\+2622688\*' --list block.*\): 5$/,
    );
    expect(update.out.slice(7)).toEqual([
      '  0268800  MIAS  Canal+ Telecom, La Réunion - Océan indien, allocated 2026-02-20',
      '  0268900  MIAS  Canal+ Telecom, Mayotte, allocated 2026-02-20',
      '  0598700  MIAS  Canal+ Telecom, Guadeloupe, St Martin et St Barthélemy, allocated 2026-02-20',
      '  0598800  MIAS  Canal+ Telecom, Guyane, allocated 2026-02-20',
      '  0598900  MIAS  Canal+ Telecom, Martinique, allocated 2026-02-20',
    ]);

    // `data info` compares the data in use with the snapshot shipped in the package: the same blocks.
    const info = capture(env());
    expect(await runCli(['data', 'info'], info.io)).toBe(0);
    expect(info.out.slice(1, 6)).toEqual(expected);

    // A second update with nothing new lists no new block, and still the candidates.
    const again = capture(env());
    expect(await runCli(['data', 'update'], again.io)).toBe(0);
    expect(again.out.slice(1, 5)).toEqual([
      'New blocks of call-centre operators since the previous data (data date 2026-05-05): 0',
      '  (none)',
      'New blocks under the NPV prefixes since the previous data (data date 2026-05-05): 0',
      '  (none)',
    ]);
  });

  it('`data update` exits 4 and says MAJRIO was kept when only MAJRIO cannot be fetched', async () => {
    routes['/MAJRIO.csv'] = { status: 503, body: Buffer.alloc(0) };
    const update = capture(env());
    expect(await runCli(['data', 'update'], update.io)).toBe(4);
    expect(update.out.join('\n')).toContain('data date 2026-05-01');
    expect(update.err.join('\n')).toContain(
      'MAJRIO.csv not updated (MAJRIO.csv: download failed (HTTP 503)): the previous MAJRIO.csv is kept',
    );
    expect(readFileSync(join(dir, 'MAJNUM.csv')).equals(newerMajnum)).toBe(true);
  });

  it('`data update` exits 1 and says the old files are kept when the download fails', async () => {
    routes['/MAJNUM.csv'] = { status: 500, body: Buffer.alloc(0) };
    const update = capture(env());
    expect(await runCli(['data', 'update'], update.io)).toBe(1);
    expect(update.err.join('\n')).toContain('previous files are kept');
    expectUntouched();
  });

  it('`data update` exits 1 naming the reason when MAJNUM shrank by more than 5 %, and `--force` installs it', async () => {
    const lines = newerMajnum.toString('latin1').split('\n');
    routes['/MAJNUM.csv'] = { status: 200, body: Buffer.from(`${lines.slice(0, 12_001).join('\n')}\n`, 'latin1') };
    const refused = capture(env());
    expect(await runCli(['data', 'update'], refused.io)).toBe(1);
    expect(refused.err.join('\n')).toContain(
      'previous files are kept: MAJNUM.csv: 12000 rows, 40 % fewer than the 19991 in use',
    );
    expectUntouched();
    const forced = capture(env());
    expect(await runCli(['data', 'update', '--force'], forced.io)).toBe(0);
    expect(forced.out.join('\n')).toContain('12000 MAJNUM rows');
    expect(await runCli(['data', 'update', '--forse'], capture(env()).io)).toBe(2);
  });

  it('answers an unknown command with its usage and exit code 2', async () => {
    const run = capture(env());
    expect(await runCli(['nope'], run.io)).toBe(2);
    expect(run.err.join('\n')).toContain(
      'usage: phone-rep <lookup|info|batch|serve|canary|data|list|token|backup|restore> …',
    );
  });
});
