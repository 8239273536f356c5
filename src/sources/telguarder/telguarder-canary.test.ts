import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useCanaryLoopback } from '../../../test/support/canary-loopback.js';
import { telguarderCanaryTarget } from './telguarder-canary.js';

const fixture = (name: string): Buffer => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));

const site = useCanaryLoopback(telguarderCanaryTarget, ['TELGUARDER_URL']);

describe('canary for telguarder (a loopback server standing in for the site)', () => {
  it('follows the search to the number page and lists the markers found there', async () => {
    site.handle((request, response) => {
      if (request.method === 'POST') {
        response.writeHead(303, { location: '/fr/numero/0600000003' });
        response.end();
        return;
      }
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(fixture('normal.html'));
    });
    const { healthy, lines } = await site.run(['0600000003']);
    expect(healthy).toBe(true);
    expect(lines[0]).toBe('== telguarder');
    expect(lines).toContain('      found   div.ai-number-stats-panel');
    expect(lines.some((line) => line.includes('ok {"spamScore":72'))).toBe(true);
    expect(lines.join('\n')).not.toContain('0600000003');
  });

  it('fails and names the missing stats panel on a challenge page', async () => {
    site.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(fixture('challenge.html'));
    });
    const { healthy, lines } = await site.run(['0600000003']);
    expect(healthy).toBe(false);
    expect(lines).toContain('      MISSING div.ai-number-stats-panel');
  });
});
