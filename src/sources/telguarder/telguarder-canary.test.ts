import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackServer } from '../../../test/support/loopback-server.js';
import type { LoopbackHandler, LoopbackServer } from '../../../test/support/loopback-server.js';
import { loadConfig } from '../../config/config.js';
import { runCanary } from '../canary.js';
import { telguarderCanaryTarget } from './telguarder-canary.js';

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
  const config = loadConfig({ TELGUARDER_URL: server.url });
  const healthy = await runCanary({ config, numbers, out: (line) => lines.push(line), targets: [telguarderCanaryTarget] });
  return { healthy, lines };
}

describe('canary for telguarder (a loopback server standing in for the site)', () => {
  it('follows the search to the number page and lists the markers found there', async () => {
    handler = (request, response) => {
      if (request.method === 'POST') {
        response.writeHead(303, { location: '/fr/numero/0600000003' });
        response.end();
        return;
      }
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(fixture('normal.html'));
    };
    const { healthy, lines } = await runAgainstLoopback(['0600000003']);
    expect(healthy).toBe(true);
    expect(lines[0]).toBe('== telguarder');
    expect(lines).toContain('      found   div.ai-number-stats-panel');
    expect(lines.some((line) => line.includes('ok {"spamScore":72'))).toBe(true);
    expect(lines.join('\n')).not.toContain('0600000003');
  });

  it('fails and names the missing stats panel on a challenge page', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(fixture('challenge.html'));
    };
    const { healthy, lines } = await runAgainstLoopback(['0600000003']);
    expect(healthy).toBe(false);
    expect(lines).toContain('      MISSING div.ai-number-stats-panel');
  });
});
