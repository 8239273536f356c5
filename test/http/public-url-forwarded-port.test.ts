// The public base URL of SpamBlocker's configs behind a proxy that publishes another port than
// the instance's (compose: nginx on the host's 8080): the port a trusted proxy forwards in
// X-Forwarded-Port is kept, the scheme's own left out, and a client's own header never read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { scoredSources } from '../../harness/scored-sources.js';

const QUERY = '/api/phone/{cc}{domestic}/verdict?wait=3500&cid=fr';

async function baseOf(server: TestServer, headers: Record<string, string>): Promise<string> {
  const answer = await fetch(`${server.baseUrl}/integrations/spamblocker/query.json`, { headers });
  expect(answer.status).toBe(200);
  const api = (await answer.json()) as { actions: Array<{ type: string; url?: string }> };
  const url = api.actions.find((action) => action.type === 'HttpDownload')?.url ?? '';
  expect(url.endsWith(QUERY), url).toBe(true);
  return url.slice(0, -QUERY.length);
}

describe('the public base URL and X-Forwarded-Port', () => {
  let proxied: TestServer;
  let direct: TestServer;
  beforeAll(async () => {
    proxied = await startTestServer({ env: { TRUST_PROXY: 'loopback' }, overrides: { sources: scoredSources({}) } });
    direct = await startTestServer({ overrides: { sources: scoredSources({}) } });
  });
  afterAll(async () => {
    await proxied.close();
    await direct.close();
  });

  // What the shipped nginx.conf sends: the host without its port, the scheme, the port apart.
  const fromProxy = (port: string, proto = 'http'): Record<string, string> => ({
    'x-forwarded-for': '192.0.2.7',
    'x-forwarded-host': 'phones.example.org',
    'x-forwarded-proto': proto,
    'x-forwarded-port': port,
  });

  it('keeps the port a trusted proxy forwards', async () => {
    expect(await baseOf(proxied, fromProxy('8080'))).toBe('http://phones.example.org:8080');
    expect(await baseOf(proxied, fromProxy('8443', 'https'))).toBe('https://phones.example.org:8443');
  });

  it('leaves out the scheme’s own port', async () => {
    expect(await baseOf(proxied, fromProxy('80'))).toBe('http://phones.example.org');
    expect(await baseOf(proxied, fromProxy('443', 'https'))).toBe('https://phones.example.org');
    expect(await baseOf(proxied, fromProxy('443'))).toBe('http://phones.example.org:443');
  });

  it('takes the last value of a repeated header, and ignores one that is not a port', async () => {
    expect(await baseOf(proxied, fromProxy('666, 8080'))).toBe('http://phones.example.org:8080');
    for (const bad of ['0', '65536', 'eighty', '80a', ''])
      expect(await baseOf(proxied, fromProxy(bad)), bad).toBe('http://phones.example.org');
  });

  it('keeps a port already in the forwarded host', async () => {
    expect(await baseOf(proxied, { ...fromProxy('9999'), 'x-forwarded-host': 'phones.example.org:8080' })).toBe(
      'http://phones.example.org:8080',
    );
  });

  it('never reads the header from a client TRUST_PROXY does not trust', async () => {
    const base = new URL(direct.baseUrl);
    expect(await baseOf(direct, fromProxy('8080'))).toBe(`http://${base.host}`);
  });
});
