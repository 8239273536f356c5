import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackServer } from '../../../test/support/loopback-server.js';
import type { LoopbackHandler, LoopbackServer } from '../../../test/support/loopback-server.js';
import { loadConfig } from '../../config/config.js';
import { runCanary } from '../canary.js';
import { numeroinconnuCanaryTarget } from './numeroinconnu-canary.js';

const fixture = (name: string): Buffer => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));

let server: LoopbackServer;
let handler: LoopbackHandler;

beforeAll(async () => {
  server = await startLoopbackServer((request, response) => handler(request, response));
});
afterAll(async () => {
  await server.close();
});

async function runAgainstLoopback(numbers: string[]) {
  const lines: string[] = [];
  const config = loadConfig({ NUMEROINCONNU_URL: server.url });
  const healthy = await runCanary({ config, numbers, out: (line) => lines.push(line), targets: [numeroinconnuCanaryTarget] });
  return { healthy, lines };
}

describe('canary for numeroinconnu (a loopback server standing in for the site)', () => {
  it('passes and lists the markers found on a normal page, without the number in clear', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(fixture('normal.html'));
    };
    const { healthy, lines } = await runAgainstLoopback(['06 00 00 00 01']);
    expect(healthy).toBe(true);
    expect(lines[0]).toBe('== numeroinconnu');
    expect(lines).toContain('      found   #progress-bar-inner (optional)');
    expect(lines.some((line) => line.includes('ok {"dangerPercent":84'))).toBe(true);
    expect(lines.join('\n')).not.toContain('0600000001');
  });

  it('fails and names the missing required marker on a challenge page', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(fixture('challenge.html'));
    };
    const { healthy, lines } = await runAgainstLoopback(['0600000001']);
    expect(healthy).toBe(false);
    expect(lines).toContain('  06••••••01: blocked(challenge)');
    expect(lines.some((line) => line.startsWith('      MISSING comments count'))).toBe(true);
  });
});
