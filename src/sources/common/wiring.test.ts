import { afterEach, describe, expect, it } from 'vitest';
import { startLoopbackServer } from '../../../test/support/loopback-server.js';
import type { LoopbackServer } from '../../../test/support/loopback-server.js';
import { belgianNumber, frenchNumber } from '../../../test/support/parsed-numbers.js';
import { loadConfig } from '../../config/config.js';
import { createHttpClient } from '../../infra/http/http-client.js';
import type { ClosableHttpClient } from '../../infra/http/http-client.js';
import { createNumeroinconnuSourceFromConfig } from '../numeroinconnu/numeroinconnu-source.js';
import { createTelguarderSourceFromConfig } from '../telguarder/telguarder-source.js';

let server: LoopbackServer | undefined;
let client: ClosableHttpClient | undefined;

afterEach(async () => {
  await client?.close();
  await server?.close();
});

/** A server that holds every request for a moment and records how many were open at once. */
async function startCountingServer() {
  let open = 0;
  let maxOpen = 0;
  const started = await startLoopbackServer(async (_request, response) => {
    open += 1;
    maxOpen = Math.max(maxOpen, open);
    await new Promise((resolve) => setTimeout(resolve, 150));
    open -= 1;
    response.writeHead(404);
    response.end();
  });
  return { server: started, maxOpen: () => maxOpen };
}

describe('community sites built from config', () => {
  it('keep at most two requests in flight to numeroinconnu even when UPSTREAM_CONCURRENCY allows more', async () => {
    const counting = await startCountingServer();
    server = counting.server;
    client = createHttpClient();
    const config = loadConfig({ NUMEROINCONNU_URL: counting.server.url, UPSTREAM_CONCURRENCY: '8' });
    const source = createNumeroinconnuSourceFromConfig(config, { client });
    const numbers = ['0600000001', '0600000002', '0600000003', '0600000004', '0600000005'];
    const outcomes = await Promise.all(numbers.map((digits) => source.lookup(frenchNumber(digits), AbortSignal.timeout(5_000))));
    expect(outcomes.every((outcome) => outcome.status === 'not_found')).toBe(true);
    expect(counting.maxOpen()).toBe(2);
    expect(counting.server.received).toHaveLength(5);
  });

  it('wire telguarder to TELGUARDER_URL and its own upstream name', async () => {
    const counting = await startCountingServer();
    server = counting.server;
    client = createHttpClient();
    const config = loadConfig({ TELGUARDER_URL: counting.server.url });
    const source = createTelguarderSourceFromConfig(config, { client });
    expect(source).toMatchObject({ slot: 'signals', name: 'telguarder' });
    expect(await source.lookup(frenchNumber('0600000003'), AbortSignal.timeout(5_000))).toEqual({ status: 'not_found' });
    expect(await source.lookup(belgianNumber(), AbortSignal.timeout(5_000))).toEqual({ status: 'not_found' });
    expect(counting.server.received.map((request) => [request.method, request.url])).toEqual([['POST', '/fr/search']]);
  });
});
