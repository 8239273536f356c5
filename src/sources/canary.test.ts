import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackServer, type LoopbackHandler, type LoopbackServer } from '../../test/support/loopback-server.js';
import { loadConfig } from '../config/config.js';
import { CANARY_TARGETS, maskNumber, parseCanaryNumber, runCanary } from './canary.js';
import { tellowsCanaryTarget } from './tellows/tellows-canary.js';

const fixture = (name: string) => readFileSync(new URL(`./tellows/fixtures/${name}`, import.meta.url));

let server: LoopbackServer;
let handler: LoopbackHandler;

beforeAll(async () => {
  server = await startLoopbackServer((request, response) => handler(request, response));
});
afterAll(async () => {
  await server.close();
});

function runAgainst(env: Record<string, string>, numbers: string[]) {
  const lines: string[] = [];
  const config = loadConfig({ TELLOWS_API_URL: server.url, TELLOWS_WEB_URL: server.url, ...env });
  // Only the tellows target: the other upstreams' canary tests live beside their adapters.
  return runCanary({ config, numbers, out: (line) => lines.push(line), targets: [tellowsCanaryTarget] }).then((healthy) => ({ healthy, lines }));
}

describe('runCanary (a loopback server standing in for tellows)', () => {
  it('passes and lists the found markers when the page has them', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(fixture('page-normal.html'));
    };
    const { healthy, lines } = await runAgainst({}, ['06 00 00 00 01']);
    expect(healthy).toBe(true);
    expect(lines[0]).toBe('== tellows');
    expect(lines).toContain('      found   img.scoreimage');
    expect(lines.some((line) => line.includes('ok {"score":8'))).toBe(true);
    // the number never appears in clear
    expect(lines.join('\n')).not.toContain('0600000001');
  });

  it('fails and names the missing marker when a challenge page answers', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(fixture('page-challenge.html'));
    };
    const { healthy, lines } = await runAgainst({}, ['0600000001']);
    expect(healthy).toBe(false);
    expect(lines).toContain('  06••••••01: blocked(challenge)');
    expect(lines).toContain('      MISSING img.scoreimage');
  });

  it('checks the API markers when a key is configured', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(fixture('api-trailer-before.txt'));
    };
    const { healthy, lines } = await runAgainst({ TELLOWS_API_KEY: 'invented-key' }, ['0600000001']);
    expect(healthy).toBe(true);
    expect(lines).toContain('      found   json: tellows.score (1-9)');
  });

  it('fails on an error outcome such as a 503', async () => {
    handler = (_request, response) => {
      response.writeHead(503);
      response.end('down');
    };
    const { healthy, lines } = await runAgainst({}, ['0600000001']);
    expect(healthy).toBe(false);
    expect(lines).toContain('  06••••••01: error(http_5xx)');
  });

  it('reports an invalid number without failing the run with an exception', async () => {
    const { healthy, lines } = await runAgainst({}, ['12']);
    expect(healthy).toBe(false);
    expect(lines[1]).toContain('not a valid number');
  });
});

describe('canary helpers', () => {
  it('checks every upstream', () => {
    expect(CANARY_TARGETS.map((target) => target.name)).toEqual(['tellows', 'numeroinconnu', 'telguarder']);
  });

  it('masks every long digit run', () => {
    expect(maskNumber('http://x/num/0600000001?n=0032470000000')).toBe('http://x/num/06••••••01?n=00•••••••••00');
  });

  it('parses French-plan and foreign numbers', () => {
    expect(parseCanaryNumber('+262 692 00 00 00')).toMatchObject({ ok: true, value: { isFrenchPlan: true, frenchNationalDigits: '0692000000' } });
    expect(parseCanaryNumber('+32 470 00 00 00')).toMatchObject({ ok: true, value: { isFrenchPlan: false, number: '+32470000000' } });
  });
});
