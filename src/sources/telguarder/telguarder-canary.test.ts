import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useCanaryLoopback } from '../../../test/support/canary-loopback.js';
import { telguarderUpstream } from './telguarder-upstream.js';

const fixture = (name: string): Buffer => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));

const site = useCanaryLoopback(telguarderUpstream, ['TELGUARDER_URL']);

describe('canary for telguarder (a loopback server standing in for the site)', () => {
  it('tries both request forms and says which one answered with the stats panel', async () => {
    // Only the direct number page exists on this stand-in: the search form is refused.
    site.handle((request, response) => {
      if (request.method === 'GET' && request.url === '/fr/number/0600000003') {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end(fixture('normal.html'));
        return;
      }
      response.writeHead(404);
      response.end();
    });
    const configuredSearch = await site.run(['0600000003']);
    expect(configuredSearch.lines).toContain(' -- TELGUARDER_LOOKUP=search (POST /fr/search) (configured)');
    expect(configuredSearch.lines).toContain(' -- TELGUARDER_LOOKUP=number (GET /fr/number/…)');
    expect(configuredSearch.lines).toContain(
      '  telguarder: answered with its required markers via TELGUARDER_LOOKUP=number (GET /fr/number/…)',
    );
    // The configured form gave no page to judge (404 is not_found): nothing says its layout is fine.
    expect(configuredSearch.lines).toContain('    POST http://127.0.0.1:' + site.port() + '/fr/search → 404');

    const configuredNumber = await site.run(['0600000003'], { TELGUARDER_LOOKUP: 'number' });
    expect(configuredNumber.healthy).toBe(true);
    expect(configuredNumber.lines).toContain(' -- TELGUARDER_LOOKUP=number (GET /fr/number/…) (configured)');
  });

  it('says when neither request form answered with the stats panel', async () => {
    site.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(fixture('challenge.html'));
    });
    const { healthy, lines } = await site.run(['0600000003']);
    expect(healthy).toBe(false);
    expect(lines).toContain('  telguarder: no request form answered with its required markers');
  });

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
    expect(lines.some((line) => line.includes('ok {"spamScore":74'))).toBe(true);
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
