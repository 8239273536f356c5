import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useCanaryLoopback } from '../../test/support/canary-loopback.js';
import { canaryNumbersFor, DEFAULT_CANARY_NUMBERS, maskNumber, parseCanaryNumber } from './canary.js';
import { UPSTREAMS } from './upstreams.js';
import { loadConfig } from '../config/config.js';
import { tellowsUpstream } from './tellows/tellows-upstream.js';

const fixture = (name: string) => readFileSync(new URL(`./tellows/fixtures/${name}`, import.meta.url));

const site = useCanaryLoopback(tellowsUpstream, ['TELLOWS_API_URL', 'TELLOWS_WEB_URL']);

describe('runCanary (a loopback server standing in for tellows)', () => {
  it('passes and lists the found markers when the page has them', async () => {
    site.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(fixture('page-normal.html'));
    });
    const { healthy, lines } = await site.run(['06 00 00 00 01'], {});
    expect(healthy).toBe(true);
    expect(lines[0]).toBe('== tellows');
    expect(lines).toContain('      found   img.scoreimage');
    expect(lines.some((line) => line.includes('ok {"score":8'))).toBe(true);
    // the number never appears in clear
    expect(lines.join('\n')).not.toContain('0600000001');
  });

  it('fails and names the missing marker when a challenge page answers', async () => {
    site.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(fixture('page-challenge.html'));
    });
    const { healthy, lines } = await site.run(['0600000001'], {});
    expect(healthy).toBe(false);
    expect(lines).toContain('  06••••••01: blocked(challenge), cause blocked');
    expect(lines).toContain('      MISSING img.scoreimage');
    // The summary names every missing marker and the failure's cause, not "see above".
    const markers = 'img.scoreimage, score in img.scoreimage alt or src (s{N}.jpg / score{N}.png)';
    const named = `tellows: MISSING markers: ${markers}; failed lookups: blocked`;
    expect(lines).toContain(`  ${named}`);
    expect(lines.at(-1)).toBe(`canary: FAILED: ${named}`);
  });

  it('checks the API markers when a key is configured', async () => {
    site.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(fixture('api-trailer-before.txt'));
    });
    const { healthy, lines } = await site.run(['0600000001'], { TELLOWS_API_KEY: 'invented-key' });
    expect(healthy).toBe(true);
    expect(lines).toContain('      found   json: tellows.score (1-9)');
  });

  it('fails on an error outcome such as a 503', async () => {
    site.handle((_request, response) => {
      response.writeHead(503);
      response.end('down');
    });
    const { healthy, lines } = await site.run(['0600000001'], {});
    expect(healthy).toBe(false);
    expect(lines).toContain('  06••••••01: error(http_5xx), cause http_503');
    expect(lines.at(-1)).toBe('canary: FAILED: tellows: failed lookups: http_503');
  });

  it('reports an invalid number without failing the run with an exception', async () => {
    const { healthy, lines } = await site.run(['12'], {});
    expect(healthy).toBe(false);
    expect(lines[1]).toContain('not a valid number');
  });
});

describe('canary helpers', () => {
  it('checks every upstream', () => {
    expect(UPSTREAMS.map((upstream) => upstream.name)).toEqual(['tellows', 'numeroinconnu', 'telguarder']);
  });

  it('reads CANARY_NUMBERS: the numbers of an upstream first, then the bare ones, then the defaults', () => {
    const setting = 'telguarder:0612345678,0699999999,telguarder:+33612345679';
    expect(canaryNumbersFor('telguarder', setting)).toEqual(['0612345678', '+33612345679']);
    expect(canaryNumbersFor('tellows', setting)).toEqual(['0699999999']);
    expect(canaryNumbersFor('numeroinconnu', 'telguarder:0612345678')).toEqual([...DEFAULT_CANARY_NUMBERS]);
    expect(canaryNumbersFor('tellows', undefined)).toEqual([...DEFAULT_CANARY_NUMBERS]);
  });

  it('refuses a malformed CANARY_NUMBERS, an unknown TELGUARDER_LOOKUP or a negative CANARY_INTERVAL_S, naming the variable', () => {
    expect(() => loadConfig({ CANARY_NUMBERS: 'tellow:0612345678' })).toThrow(
      /CANARY_NUMBERS="tellow:0612345678" is not valid/,
    );
    expect(() => loadConfig({ CANARY_NUMBERS: '0612345678;0699999999' })).toThrow(/CANARY_NUMBERS/);
    expect(() => loadConfig({ TELGUARDER_LOOKUP: 'get' })).toThrow(
      /TELGUARDER_LOOKUP="get" is not valid: expected one of search, number/,
    );
    expect(() => loadConfig({ CANARY_INTERVAL_S: '-5' })).toThrow(/CANARY_INTERVAL_S/);
    expect(loadConfig({ CANARY_NUMBERS: 'telguarder:0612345678,+32470000000' }).CANARY_NUMBERS).toBe(
      'telguarder:0612345678,+32470000000',
    );
    expect(loadConfig({})).toMatchObject({ TELGUARDER_LOOKUP: 'search', CANARY_INTERVAL_S: 0 });
  });

  it('masks every long digit run', () => {
    expect(maskNumber('http://x/num/0600000001?n=0032470000000')).toBe('http://x/num/06••••••01?n=00•••••••••00');
  });

  it('parses French-plan and foreign numbers', () => {
    expect(parseCanaryNumber('+262 692 00 00 00')).toMatchObject({
      ok: true,
      value: { isFrenchPlan: true, frenchNationalDigits: '0692000000' },
    });
    expect(parseCanaryNumber('+32 470 00 00 00')).toMatchObject({
      ok: true,
      value: { isFrenchPlan: false, number: '+32470000000' },
    });
  });
});
