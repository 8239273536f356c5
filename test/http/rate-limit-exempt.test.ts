// RATE_LIMIT_EXEMPT over real HTTP: the addresses and ranges an operator lists (a PBX) are not
// counted; every other client keeps the 429, on the text routes too. The client address is
// the socket's, or the X-Forwarded-For entry of a trusted proxy (TRUST_PROXY=loopback), which is
// how a test on loopback speaks as 10.x, 192.0.2.x and IPv6 clients.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';

async function statusOf(
  server: TestServer,
  path: string,
  forwardedFor?: string,
): Promise<{ status: number; rateLimit: string | null }> {
  const response = await fetch(server.baseUrl + path, {
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  });
  await response.arrayBuffer();
  return { status: response.status, rateLimit: response.headers.get('ratelimit') };
}

describe('RATE_LIMIT_EXEMPT', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: {
        RATE_LIMIT_MAX: '2',
        RATE_LIMIT_WINDOW_S: '60',
        TRUST_PROXY: 'loopback',
        RATE_LIMIT_EXEMPT: '192.0.2.10, 10.0.0.0/8, 2001:db8::/32',
      },
      overrides: { sources: healthyFakeSources() },
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it.each([
    ['an exempt address', '192.0.2.10'],
    ['an address in an exempt IPv4 range', '10.20.30.40'],
    ['an address in an exempt IPv6 range', '2001:db8:5::1'],
    ['an IPv4-mapped address in an exempt IPv4 range', '::ffff:10.1.1.1'],
  ])('never limits %s, and sends it no RateLimit header', async (_label, address) => {
    for (const suffix of ['/verdict', '/cid', '/score', '', '/verdict', '/cid']) {
      const answer = await statusOf(server, `/api/phone/0612345678${suffix}`, address);
      expect(answer.status, suffix).toBe(200);
      expect(answer.rateLimit).toBeNull();
    }
  });

  it.each([
    ['the next IPv4 address', '192.0.2.11'],
    ['an IPv4 address outside the range', '11.0.0.1'],
    ['an IPv6 address outside the range', '2001:db9::1'],
  ])('still answers 429 to %s, on the text routes too', async (_label, address) => {
    expect((await statusOf(server, '/api/phone/0612345678/verdict', address)).status).toBe(200);
    expect((await statusOf(server, '/api/phone/0612345678/cid', address)).status).toBe(200);
    expect((await statusOf(server, '/api/phone/0612345678/verdict', address)).status).toBe(429);
    expect((await statusOf(server, '/api/phone/0612345678/cid', address)).status).toBe(429);
    expect((await statusOf(server, '/api/phone/0612345678', address)).status).toBe(429);
  });
});

describe('RATE_LIMIT_EXEMPT naming the socket address itself', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: { RATE_LIMIT_MAX: '1', RATE_LIMIT_EXEMPT: '127.0.0.1' },
      overrides: { sources: healthyFakeSources() },
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it('lets a PBX on that address make many calls in one window', async () => {
    for (let call = 0; call < 10; call += 1)
      expect((await statusOf(server, '/api/phone/0612345678/verdict')).status).toBe(200);
  });
});
