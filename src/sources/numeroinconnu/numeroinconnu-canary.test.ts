import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useCanaryLoopback } from '../../../test/support/canary-loopback.js';
import { numeroinconnuUpstream } from './numeroinconnu-upstream.js';

const fixture = (name: string): Buffer => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));

const site = useCanaryLoopback(numeroinconnuUpstream, ['NUMEROINCONNU_URL']);

describe('canary for numeroinconnu (a loopback server standing in for the site)', () => {
  it('passes and lists the markers found on a normal page, without the number in clear', async () => {
    site.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(fixture('normal.html'));
    });
    const { healthy, lines } = await site.run(['06 00 00 00 01']);
    expect(healthy).toBe(true);
    expect(lines[0]).toBe('== numeroinconnu');
    expect(lines).toContain('      found   #progress-bar-inner (optional)');
    expect(lines.some((line) => line.includes('ok {"dangerPercent":48'))).toBe(true);
    expect(lines.join('\n')).not.toContain('0600000001');
  });

  it('fails and names the missing required marker on a challenge page', async () => {
    site.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(fixture('challenge.html'));
    });
    const { healthy, lines } = await site.run(['0600000001']);
    expect(healthy).toBe(false);
    expect(lines).toContain('  06••••••01: blocked(challenge), cause blocked');
    expect(lines.some((line) => line.startsWith('      MISSING comments count'))).toBe(true);
    expect(lines.at(-1)).toMatch(/^canary: FAILED: numeroinconnu: MISSING markers: .*comments count/);
  });

  it('does not ask the site about a number it does not cover, as lookups do (skipped)', async () => {
    let requests = 0;
    site.handle((_request, response) => {
      requests += 1;
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(fixture('normal.html'));
    });
    const { healthy, lines } = await site.run(['+32 470 00 00 00', '06 00 00 00 01']);
    expect(requests).toBe(1);
    expect(healthy).toBe(true);
    expect(lines).toContain('  +32•••••••00: not covered by this upstream (skipped, as lookups do)');
  });
});
