// The systemd units of examples/systemd pass `systemd-analyze verify` (installed by
// scripts/test-prerequisites.sh), as installed in this checkout: their /opt/phone-reputation is
// replaced by the checkout's folder, since verify checks that each command exists. verify only
// warns on an unknown key, so any output at all fails the test (a misspelt key is shown to).
// The hardening the unit promises (docs/operations.md, "Install as a service") is read from it.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
const UNITS_DIR = join(ROOT, 'examples', 'systemd');
const UNITS = ['phone-reputation.service', 'phone-reputation-data.service', 'phone-reputation-data.timer'];
const work = mkdtempSync(join(tmpdir(), 'phone-rep-units-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The units as installed here, each edited by `edit`, written to a folder of their own. */
function installed(edit: (name: string, text: string) => string = (_name, text) => text): string {
  const dir = mkdtempSync(join(work, 'units-'));
  for (const name of UNITS)
    writeFileSync(
      join(dir, name),
      edit(name, readFileSync(join(UNITS_DIR, name), 'utf8').replaceAll('/opt/phone-reputation', ROOT)),
    );
  return dir;
}

function verify(dir: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      'systemd-analyze',
      ['verify', '--man=no', ...UNITS.map((name) => join(dir, name))],
      { timeout: 30_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

/** `Key=value` lines of a unit's section. */
function settings(name: string, section: string): Map<string, string> {
  const text = readFileSync(join(UNITS_DIR, name), 'utf8');
  const body = text.split(/^\[/m).find((part) => part.startsWith(`${section}]`)) ?? '';
  return new Map(
    body
      .split('\n')
      .flatMap((line) =>
        /^[A-Za-z]+=/.test(line)
          ? [[line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as [string, string]]
          : [],
      ),
  );
}

describe('examples/systemd', () => {
  it('holds exactly the service, the data refresh service and its timer', () => {
    expect(readdirSync(UNITS_DIR).sort()).toEqual([...UNITS].sort());
  });

  it('passes systemd-analyze verify without a word', async () => {
    expect(await verify(installed())).toEqual({ code: 0, output: '' });
  });

  it('would be caught with a misspelt key or a missing command (the check can fail)', async () => {
    const misspelt = await verify(
      installed((name, text) =>
        name === 'phone-reputation.service' ? text.replace('ProtectSystem=', 'ProtectSystm=') : text,
      ),
    );
    expect(misspelt.output).toContain("Unknown key 'ProtectSystm'");
    const missing = await verify(
      installed((_name, text) => text.replaceAll(`${ROOT}/node_modules/.bin/node`, '/nonexistent/node')),
    );
    expect(missing.code).not.toBe(0);
  });

  it('runs as its own user, writes only its state directory (STATE_DIR), and is hardened', () => {
    const service = settings('phone-reputation.service', 'Service');
    expect(service.get('User')).toBe('phone-reputation');
    expect(service.get('StateDirectory')).toBe('phone-reputation');
    expect(service.get('Environment')).toContain('STATE_DIR=%S/phone-reputation');
    expect(service.get('ExecStart')).toBe(
      '/opt/phone-reputation/node_modules/.bin/node /opt/phone-reputation/dist/start.js',
    );
    for (const [key, value] of <Array<[string, string]>>[
      ['NoNewPrivileges', 'yes'],
      ['ProtectSystem', 'strict'],
      ['PrivateTmp', 'yes'],
      ['ProtectHome', 'yes'],
      ['RestrictAddressFamilies', 'AF_INET AF_INET6 AF_UNIX'],
      ['KillMode', 'mixed'],
    ]) {
      expect(service.get(key), key).toBe(value);
    }
    // Longer than SHUTDOWN_GRACE_MS's default (10 s): systemd never cuts the drain short.
    expect(Number.parseInt(service.get('TimeoutStopSec') ?? '0', 10)).toBeGreaterThan(10);
  });

  it('refreshes the numbering data monthly into the same state directory, with the same user', () => {
    expect(settings('phone-reputation-data.timer', 'Timer').get('OnCalendar')).toBe('monthly');
    const data = settings('phone-reputation-data.service', 'Service');
    expect(data.get('ExecStart')).toContain('/opt/phone-reputation/bin/phone-rep.js data update');
    expect(data.get('User')).toBe('phone-reputation');
    expect(data.get('Environment')).toContain('STATE_DIR=%S/phone-reputation');
    expect(data.get('SuccessExitStatus')).toBe('4');
  });
});
