// Why a source failed, produced by real faults on loopback: the real service (adapters,
// fetchers, shared HTTP client, engine, breaker) with numeroinconnu.fr (the `community` slot)
// pointed at a fault and the two other sites at a healthy stand-in. Each fault must come out as
// its cause class in three places: the log line of the failed fetch (read from the service's
// own logger destination), `meta.sources.community.cause`, and readiness (`lastFailure`). No log
// line may hold the number, in any spelling.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackServer, type LoopbackHandler, type LoopbackServer } from '../../harness/loopback.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { fixtureText, startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';
import { capturingLogger } from '../support/loggers.js';

interface SourceMeta {
  status: string;
  reason?: string;
  cause?: string;
}

interface Outcome {
  status: number;
  community: SourceMeta;
  ready: { status: string; lastFailure: { status: string; reason: string; cause: string; at: string } | null };
  /** The failure lines the fetches of `community` logged. */
  failures: Array<Record<string, unknown>>;
}

// Every number asked below starts with this: none of its spellings may reach a log line.
const NUMBER_STEM = '0645127';
const DIGITS_IN_ANY_SPELLING = /645127/;

let sites: FakeUpstreamSites;
let fault: LoopbackServer | undefined;
let service: TestServer | undefined;
let raw: string[] = [];

beforeAll(async () => {
  // tellows and telguarder answer "unknown number": the lookup is a 200 whatever the fault.
  sites = await startFakeUpstreamSites();
});

afterAll(async () => {
  await sites.close();
});

afterEach(async () => {
  await service?.close();
  await fault?.close();
  service = undefined;
  fault = undefined;
  expectNoNumberIn(raw);
  raw = [];
});

/** Whatever the fault, no line the service logged holds the number. */
function expectNoNumberIn(lines: readonly string[]): void {
  for (const line of lines) expect(line).not.toMatch(DIGITS_IN_ANY_SPELLING);
}

/** The service with numeroinconnu at `communityUrl`. */
type LogLines = Array<Record<string, unknown>>;

async function serviceWith(
  communityUrl: string,
  env: Record<string, string> = {},
): Promise<{ server: TestServer; lines: LogLines }> {
  expectNoNumberIn(raw);
  const captured = capturingLogger('info');
  raw = captured.raw;
  service = await startTestServer({
    env: { ...sites.env(), NUMEROINCONNU_URL: communityUrl, RATE_LIMIT_MAX: '0', ...env },
    logger: captured.logger,
  });
  return { server: service, lines: captured.lines };
}

async function lookUp(server: TestServer, lines: LogLines, national: string): Promise<Outcome> {
  const response = await fetch(`${server.baseUrl}/api/phone/${national}`);
  const body = (await response.json()) as { meta: { sources: { community: SourceMeta } } };
  const readiness = await fetch(`${server.baseUrl}/health/ready`);
  const ready = (await readiness.json()) as { dependencies: { upstreams: Record<string, Outcome['ready']> } };
  return {
    status: response.status,
    community: body.meta.sources.community,
    ready: ready.dependencies.upstreams.numeroinconnu as Outcome['ready'],
    failures: lines.filter((line) => line.upstream === 'numeroinconnu' && typeof line.cause === 'string'),
  };
}

/** One lookup of a fresh number against `communityUrl`. */
async function oneLookup(communityUrl: string, suffix: string, env: Record<string, string> = {}): Promise<Outcome> {
  const { server, lines } = await serviceWith(communityUrl, env);
  return lookUp(server, lines, `${NUMBER_STEM}${suffix}`);
}

async function faultyServer(handler: LoopbackHandler): Promise<string> {
  fault = await startLoopbackServer(handler);
  return fault.url;
}

/** The three places a cause shows, for one failed lookup. */
interface ExpectedCause {
  reason: string;
  cause: string;
  status?: string;
  msg?: string;
}

function expectCause(outcome: Outcome, expected: ExpectedCause): void {
  const status = expected.status ?? 'error';
  expect(outcome.status).toBe(200);
  expect(outcome.community).toMatchObject({ status, reason: expected.reason, cause: expected.cause });
  expect(outcome.ready.lastFailure).toMatchObject({ status, reason: expected.reason, cause: expected.cause });
  expect(outcome.failures.at(-1)).toMatchObject({
    level: 40,
    slot: 'community',
    upstream: 'numeroinconnu',
    status,
    reason: expected.reason,
    cause: expected.cause,
    msg: expected.msg ?? `numeroinconnu failed: ${expected.cause}`,
  });
}

describe('the cause of a failed fetch, from a real fault on loopback', () => {
  it('refused: nothing listens on the port', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expectCause(await oneLookup(`http://127.0.0.1:${port}`, '001'), { reason: 'connection', cause: 'refused' });
  });

  it('dns: a host under .invalid, which no resolver knows (RFC 6761)', async () => {
    // The local resolver answers at once (about 50 ms measured here); the default 3 s source
    // deadline is far beyond it, so a slow resolver would show as `timeout`, never pass as `dns`.
    expectCause(await oneLookup('http://phone-rep-cause-test.invalid', '002'), { reason: 'connection', cause: 'dns' });
  });

  it('reset: the site closes the connection without answering', async () => {
    const url = await faultyServer((_request, response) => {
      response.socket?.destroy();
    });
    expectCause(await oneLookup(url, '003'), { reason: 'connection', cause: 'reset' });
  });

  it('timeout: the site accepts the request and never answers (the source deadline set small)', async () => {
    const url = await faultyServer(() => undefined);
    const outcome = await oneLookup(url, '004', { SOURCE_TIMEOUT_MS: '1200', LOOKUP_TIMEOUT_MS: '4000' });
    expectCause(outcome, { reason: 'timeout', cause: 'timeout' });
  });

  it('http_<status>: a 500 names its status; a 400 too', async () => {
    const url = await faultyServer((request, response) => {
      const status = request.url.endsWith('5') ? 500 : 400;
      response.writeHead(status, { 'content-type': 'text/html' }).end('<html>oops</html>');
    });
    const { server, lines } = await serviceWith(url);
    expectCause(await lookUp(server, lines, `${NUMBER_STEM}005`), { reason: 'http_5xx', cause: 'http_500' });
    expectCause(await lookUp(server, lines, `${NUMBER_STEM}006`), { reason: 'http_status', cause: 'http_400' });
  });

  it('blocked: a 403 challenge page, and a challenge page served 200', async () => {
    const challenge = fixtureText('numeroinconnu', 'challenge.html');
    const forbidden = await faultyServer((_request, response) => {
      response.writeHead(403, { 'content-type': 'text/html' }).end(challenge);
    });
    expectCause(await oneLookup(forbidden, '007'), { status: 'blocked', reason: 'http_403', cause: 'blocked' });
    await service?.close();
    await fault?.close();
    const served = await faultyServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end(challenge);
    });
    expectCause(await oneLookup(served, '008'), { status: 'blocked', reason: 'challenge', cause: 'blocked' });
  });

  it('layout: a page of the site without the marker the parser needs, named in the log', async () => {
    // The site's own page, its comment count taken out (element and row label): the danger bar
    // says it is the site's page, so this is a changed layout, not a challenge.
    const page = fixtureText('numeroinconnu', 'normal.html')
      .replaceAll(/<span id=['"]count-comments['"]>[^<]*<\/span>/g, '')
      .replaceAll('Nombre de commentaires', 'Avis publiés');
    const url = await faultyServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    });
    const marker = 'comments count (#count-comments or row "Nombre de commentaires")';
    const outcome = await oneLookup(url, '009');
    const msg = `numeroinconnu failed: layout (missing markers: ${marker})`;
    expectCause(outcome, { reason: 'parse', cause: 'layout', msg });
    expect(outcome.failures.at(-1)?.missing).toEqual([marker]);
  });

  it('tls: a site whose certificate is self-signed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phone-rep-tls-'));
    try {
      // A throwaway certificate for this test only, made by the system's openssl.
      const [keyFile, certFile] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
      const curve = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];
      const subject = ['-nodes', '-subj', '/CN=127.0.0.1', '-days', '1'];
      const files = ['-keyout', keyFile, '-out', certFile];
      execFileSync('openssl', ['req', '-x509', ...curve, ...subject, ...files], { stdio: 'ignore' });
      const page = fixtureText('numeroinconnu', 'normal.html');
      const tls = { key: readFileSync(keyFile), cert: readFileSync(certFile) };
      const server = https.createServer(tls, (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html' }).end(page);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      try {
        expectCause(await oneLookup(`https://127.0.0.1:${port}`, '010'), { reason: 'connection', cause: 'tls' });
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('budget: the per-minute budget is spent, nothing is sent', async () => {
    const url = await faultyServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end(fixtureText('numeroinconnu', 'normal.html'));
    });
    const { server, lines } = await serviceWith(url, { NUMEROINCONNU_RPM: '1' });
    expect((await lookUp(server, lines, `${NUMBER_STEM}011`)).community).toMatchObject({ status: 'ok' });
    const spent = await lookUp(server, lines, `${NUMBER_STEM}012`);
    expectCause(spent, { status: 'blocked', reason: 'budget', cause: 'budget' });
    expect(fault?.received).toHaveLength(1);
  });

  it('breaker: after failures for five distinct numbers, the next lookup is refused at once', async () => {
    const url = await faultyServer((_request, response) => {
      response.writeHead(503, { 'content-type': 'text/html' }).end('<html>down</html>');
    });
    const { server, lines } = await serviceWith(url);
    for (let index = 0; index < 5; index += 1) {
      expectCause(await lookUp(server, lines, `${NUMBER_STEM}02${index}`), { reason: 'http_5xx', cause: 'http_503' });
    }
    const sent = fault?.received.length;
    expectCause(await lookUp(server, lines, `${NUMBER_STEM}030`), { reason: 'circuit_open', cause: 'breaker' });
    expect(fault?.received.length).toBe(sent);
  });
});
