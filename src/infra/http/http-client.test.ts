import net from 'node:net';
import zlib from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackServer, type LoopbackHandler, type LoopbackServer } from '../../../harness/loopback.js';
import { createHttpClient, transportCause, type ClosableHttpClient } from './http-client.js';
import type { HttpResult } from './types.js';

let server: LoopbackServer;
let handler: LoopbackHandler = (_request, response) => response.end('ok');
let client: ClosableHttpClient;

beforeAll(async () => {
  server = await startLoopbackServer((request, response) => handler(request, response));
  client = createHttpClient({ maxBodyBytes: 64 * 1024 });
});
afterAll(async () => {
  await client.close();
  await server.close();
});
afterEach(() => {
  server.received.length = 0;
});

function get(path: string, options: { signal?: AbortSignal; accept?: string } = {}): Promise<HttpResult> {
  return client.request({
    url: `${server.url}${path}`,
    signal: options.signal ?? AbortSignal.timeout(5_000),
    ...(options.accept === undefined ? {} : { headers: { Accept: options.accept } }),
  });
}

function bodyOf(result: HttpResult): string {
  if (result.kind !== 'response') throw new Error(`expected a response, got ${result.reason}`);
  return result.response.body;
}

describe('http client: requests', () => {
  it('sends a browser-like User-Agent, French Accept-Language and the caller Accept', async () => {
    handler = (_request, response) => response.end('hello');
    const result = await get('/page', { accept: 'application/json' });
    expect(bodyOf(result)).toBe('hello');
    const headers = server.received[0]?.headers;
    expect(headers?.['user-agent']).toMatch(/^Mozilla\/5\.0 /);
    expect(headers?.['accept-language']).toBe('fr-FR,fr;q=0.9');
    expect(headers?.accept).toBe('application/json');
  });

  it('returns non-2xx statuses as responses for the caller to judge', async () => {
    handler = (_request, response) => {
      response.writeHead(404, { 'content-type': 'text/plain', 'x-thing': 'v' });
      response.end('nope');
    };
    const result = await get('/missing');
    expect(result).toMatchObject({
      kind: 'response',
      response: { status: 404, body: 'nope', headers: { 'x-thing': 'v' } },
    });
  });

  it('sends a POST body with the caller content type', async () => {
    handler = (_request, response) => response.end('posted');
    const result = await client.request({
      url: `${server.url}/search`,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'q=0600000000',
      signal: AbortSignal.timeout(5_000),
    });
    expect(bodyOf(result)).toBe('posted');
    expect(server.received[0]).toMatchObject({ method: 'POST', body: 'q=0600000000' });
  });
});

describe('http client: deadline and abort', () => {
  it('ends a slow-drip body at the deadline as timeout', async () => {
    let timer: NodeJS.Timeout | undefined;
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      timer = setInterval(() => response.write('.'), 50);
      response.on('close', () => clearInterval(timer));
    };
    const started = Date.now();
    const result = await get('/drip', { signal: AbortSignal.timeout(400) });
    clearInterval(timer);
    expect(result).toEqual({ kind: 'failure', reason: 'timeout' });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('reports a caller abort as aborted, not timeout', async () => {
    // Never answers; the caller goes away once the request reached the server.
    const reached = new Promise<void>((resolve) => (handler = () => resolve()));
    const controller = new AbortController();
    const pending = get('/hang', { signal: controller.signal });
    await reached;
    controller.abort(new Error('client went away'));
    const result = await pending;
    expect(result).toEqual({ kind: 'failure', reason: 'aborted' });
  });
});

describe('http client: body cap and content encodings', () => {
  it('stops a body streamed past the cap as too_large', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      for (let index = 0; index < 100; index += 1) response.write('x'.repeat(1024));
      response.end();
    };
    expect(await get('/big')).toEqual({ kind: 'failure', reason: 'too_large' });
  });

  it('rejects a declared Content-Length over the cap without reading', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-length': String(200 * 1024) });
      response.write('x'.repeat(1024));
    };
    expect(await get('/declared')).toEqual({ kind: 'failure', reason: 'too_large' });
  });

  it('accepts a body exactly at the cap', async () => {
    handler = (_request, response) => response.end('y'.repeat(64 * 1024));
    expect(bodyOf(await get('/exact'))).toHaveLength(64 * 1024);
  });

  it('ends a gzip bomb as too_large, counting decoded bytes', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
    expect(bomb.length).toBeLessThan(64 * 1024); // the compressed body is itself under the cap
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      response.end(bomb);
    };
    const before = process.memoryUsage().arrayBuffers;
    expect(await get('/bomb')).toEqual({ kind: 'failure', reason: 'too_large' });
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(32 * 1024 * 1024);
  });

  it('decodes two stacked layers (gzip then br)', async () => {
    const encoded = zlib.brotliCompressSync(zlib.gzipSync(Buffer.from('deux couches')));
    handler = (_request, response) => {
      response.writeHead(200, { 'content-encoding': 'gzip, br' });
      response.end(encoded);
    };
    expect(bodyOf(await get('/two'))).toBe('deux couches');
  });

  it('decodes deflate', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-encoding': 'deflate' });
      response.end(zlib.deflateSync(Buffer.from('dégonflé')));
    };
    expect(bodyOf(await get('/deflate'))).toBe('dégonflé');
  });

  it('refuses more than two encoding layers as decoding', async () => {
    const encoded = zlib.gzipSync(zlib.gzipSync(zlib.gzipSync(Buffer.from('trois'))));
    handler = (_request, response) => {
      response.writeHead(200, { 'content-encoding': 'gzip, gzip, gzip' });
      response.end(encoded);
    };
    expect(await get('/three')).toEqual({ kind: 'failure', reason: 'decoding' });
  });

  it('reports a corrupt gzip body and an unknown encoding as decoding', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-encoding': 'gzip' });
      response.end('this is not gzip');
    };
    expect(await get('/corrupt')).toEqual({ kind: 'failure', reason: 'decoding' });
    handler = (_request, response) => {
      response.writeHead(200, { 'content-encoding': 'zstd-unknown' });
      response.end('??');
    };
    expect(await get('/unknown')).toEqual({ kind: 'failure', reason: 'decoding' });
  });
});

describe('http client: redirects', () => {
  it('follows a same-origin redirect and reports the final URL', async () => {
    handler = (request, response) => {
      if (request.url === '/old') {
        response.writeHead(301, { location: '/new' });
        response.end();
      } else response.end(`at ${request.url}`);
    };
    const result = await get('/old');
    expect(result).toMatchObject({ kind: 'response', response: { body: 'at /new', url: `${server.url}/new` } });
  });

  it('refuses a redirect to another host without connecting to it', async () => {
    const other = await startLoopbackServer((_request, response) => response.end('elsewhere'));
    handler = (_request, response) => {
      response.writeHead(302, { location: `http://localhost:${other.port}/x` });
      response.end();
    };
    expect(await get('/away')).toEqual({ kind: 'failure', reason: 'redirect' });
    expect(other.received).toHaveLength(0);
    await other.close();
  });

  it('follows a redirect to the same origin written in full', async () => {
    handler = (request, response) => {
      if (request.url === '/old') {
        response.writeHead(302, { location: `${server.url}/new` });
        response.end();
      } else response.end(`at ${request.url}`);
    };
    expect(await get('/old')).toMatchObject({ kind: 'response', response: { body: 'at /new' } });
  });

  it('refuses a redirect to the same host on another scheme or port (same origin only), without connecting to it', async () => {
    // A bare TCP listener: any connection attempt, TLS or not, shows up in its count.
    let connections = 0;
    const other = net.createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherPort = (other.address() as net.AddressInfo).port;
    try {
      for (const location of [
        `https://127.0.0.1:${otherPort}/x`,
        `http://127.0.0.1:${otherPort}/x`,
        'https://127.0.0.1/x',
        `https://127.0.0.1:${server.port}/x`,
      ]) {
        handler = (_request, response) => {
          response.writeHead(302, { location });
          response.end();
        };
        const before = server.received.length;
        expect(await get('/away'), location).toEqual({ kind: 'failure', reason: 'redirect' });
        expect(server.received.length - before, location).toBe(1);
      }
      expect(connections).toBe(0);
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it('stops after five redirects', async () => {
    handler = (request, response) => {
      const step = Number(request.url?.slice(1) ?? '0');
      response.writeHead(302, { location: `/${step + 1}` });
      response.end();
    };
    expect(await get('/0')).toEqual({ kind: 'failure', reason: 'redirect' });
    expect(server.received).toHaveLength(6);
  });

  it('turns a POST answered by 303 into a GET of the new location', async () => {
    handler = (request, response) => {
      if (request.method === 'POST') {
        response.writeHead(303, { location: '/result' });
        response.end();
      } else response.end(`${request.method} ${request.url}`);
    };
    const result = await client.request({
      url: `${server.url}/search`,
      method: 'POST',
      body: 'q=1',
      signal: AbortSignal.timeout(5_000),
    });
    expect(bodyOf(result)).toBe('GET /result');
  });

  it('keeps method and body on a 307', async () => {
    handler = (request, response) => {
      if (request.url === '/first') {
        response.writeHead(307, { location: '/second' });
        response.end();
      } else response.end(`${request.method} ${request.url} ${request.body}`);
    };
    const result = await client.request({
      url: `${server.url}/first`,
      method: 'POST',
      body: 'q=2',
      signal: AbortSignal.timeout(5_000),
    });
    expect(bodyOf(result)).toBe('POST /second q=2');
  });
});

describe('http client: charsets', () => {
  const latin1Page = Buffer.from('<p>Démarchage répété, numéro à éviter</p>', 'latin1');

  it('decodes a body declared ISO-8859-1 in Content-Type', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=ISO-8859-1' });
      response.end(latin1Page);
    };
    expect(bodyOf(await get('/latin1'))).toBe('<p>Démarchage répété, numéro à éviter</p>');
  });

  it('honours a meta charset when the header has none', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(Buffer.concat([Buffer.from('<html><head><meta charset="windows-1252"></head>'), latin1Page]));
    };
    expect(bodyOf(await get('/meta'))).toContain('Démarchage répété');
  });

  it('defaults to UTF-8', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(Buffer.from('<p>Été — “ok”</p>', 'utf8'));
    };
    expect(bodyOf(await get('/utf8'))).toBe('<p>Été — “ok”</p>');
  });

  it('reports an unknown charset as decoding', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=x-no-such-charset' });
      response.end('abc');
    };
    expect(await get('/weird')).toEqual({ kind: 'failure', reason: 'decoding' });
  });
});

describe('http client: transport failures', () => {
  it('reports a connection reset mid-body as connection, cause reset', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-length': '10000' });
      response.write('partial');
      setTimeout(() => response.socket?.resetAndDestroy(), 20);
    };
    expect(await get('/reset')).toEqual({ kind: 'failure', reason: 'connection', cause: 'reset' });
  });

  it('reports a refused connection as connection, cause refused', async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const result = await client.request({ url: `http://127.0.0.1:${port}/`, signal: AbortSignal.timeout(5_000) });
    expect(result).toEqual({ kind: 'failure', reason: 'connection', cause: 'refused' });
  });
});

describe('http client: the cause of a transport failure, from Node’s and undici’s codes', () => {
  it.each([
    ['ENOTFOUND', 'dns'],
    ['EAI_AGAIN', 'dns'],
    ['ECONNREFUSED', 'refused'],
    ['ECONNRESET', 'reset'],
    ['EPIPE', 'reset'],
    ['UND_ERR_SOCKET', 'reset'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'tls'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'tls'],
    ['CERT_HAS_EXPIRED', 'tls'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'tls'],
    ['ERR_SSL_WRONG_VERSION_NUMBER', 'tls'],
    ['EHOSTUNREACH', 'connection'],
    [undefined, 'connection'],
  ] as const)('%s is %s', (code, cause) => {
    expect(transportCause(code)).toBe(cause);
  });

  it('reads the code of an undici error’s cause (a TLS handshake to a plain HTTP port)', async () => {
    // A plain HTTP server asked over TLS: OpenSSL reads an HTTP answer as a bad record.
    handler = (_request, response) => response.end('plain');
    const url = `${server.url.replace('http:', 'https:')}/`;
    const result = await client.request({ url, signal: AbortSignal.timeout(5_000) });
    expect(result).toEqual({ kind: 'failure', reason: 'connection', cause: 'tls' });
  });
});
