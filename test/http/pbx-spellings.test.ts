// Every URL the recipes in docs/integrations/ give, with the number spellings each system sends,
// through the real server over HTTP (fake upstream sites on loopback): the HTTP side of each
// recipe, byte for byte what the system sends. The recipes themselves are run in
// test/system/kamailio-sip.test.ts (Kamailio) and test/system/pbx-recipes.test.ts (the others).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_NUMBER, startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { fetchDocumented } from '../support/contracts.js';

const SUSPICIOUS = '0612345678'; // tellows 8: block, "SPAM? 8/9 Démarchage"

let sites: FakeUpstreamSites;
let server: TestServer;
beforeAll(async () => {
  sites = await startFakeUpstreamSites({ scenarios: { [SUSPICIOUS]: KNOWN_NUMBER } });
  server = await startTestServer({ env: { ...sites.env(), TELLOWS_API_KEY: 'test-partner-key', RATE_LIMIT_MAX: '0' } });
});
afterAll(async () => {
  await server.close();
  await sites.close();
});

async function body(path: string): Promise<{ status: number; text: string; type: string | null }> {
  const answer = await fetchDocumented(server, path);
  return { status: answer.status, text: answer.text, type: answer.headers.get('content-type') };
}

async function expectAnswers(path: string, text: string): Promise<void> {
  const answer = await body(path);
  expect(answer, path).toEqual({ status: 200, text, type: 'text/plain; charset=utf-8' });
}

// The spellings each recipe makes the system send, read from its product's source
// (test/support/pbx-products.ts says which lines).
describe.each([
  // Kamailio: $fU, the user part of the From URI (examples/kamailio/kamailio.cfg, WAIT_MS 800).
  ['Kamailio $fU', '/api/phone/{n}/verdict?wait=800', ['0612345678', '+33612345678', '0033612345678']],
  // Asterisk/FreePBX: ${URIENCODE(${CALLERID(num)})}: national, or +33 written %2B33.
  ['Asterisk CURL() on /verdict', '/api/phone/{n}/verdict?wait=800', ['0612345678', '%2B33612345678', '33612345678']],
  ['Asterisk CALLERID(name) from /cid', '/api/phone/{n}/cid?wait=800', ['0612345678', '%2B33612345678', '33612345678']],
  // Superfecta's Regular Expressions source puts $thenumber in the URL as it is: a raw +.
  [
    'FreePBX Superfecta regular-expression source ($thenumber)',
    '/api/phone/{n}/cid?wait=2000',
    ['0612345678', '+33612345678'],
  ],
  // FreeSWITCH: ${caller_id_number} as it is, digits with or without + (the recipe's guard).
  [
    'FreeSWITCH curl on /verdict',
    '/api/phone/{n}/verdict?wait=800',
    ['0612345678', '+33612345678', '0033612345678', '33612345678'],
  ],
  [
    'FreeSWITCH curl on /cid',
    '/api/phone/{n}/cid?wait=800',
    ['0612345678', '+33612345678', '0033612345678', '33612345678'],
  ],
  // mod_cidlookup (not used by the recipe) keeps the digits only: string_digitsonly().
  ['FreeSWITCH mod_cidlookup url', '/api/phone/{n}/cid?wait=800', ['33612345678', '0612345678']],
  // callblocker: E.164, quoted by the script (urllib.parse.quote(number, safe='')).
  ['callblocker /verdict', '/api/phone/{n}/verdict?wait=800', ['%2B33612345678']],
  ['callblocker /cid', '/api/phone/{n}/cid?wait=800', ['%2B33612345678']],
])('%s', (_system, template, spellings) => {
  it.each(spellings)('reads %s', async (spelling) => {
    const path = template.replace('{n}', spelling);
    await expectAnswers(path, path.includes('/verdict') ? 'block\n' : 'SPAM? 8/9 Démarchage');
  });
});

describe('3CX CRM template', () => {
  it('reads the JSON score the template maps (data.risk, data.score) for [Number] with Prefix="Plus"', async () => {
    const response = await fetch(`${server.baseUrl}/api/phone/%2B33612345678/score?wait=1500`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toMatchObject({
      success: true,
      data: { number: '0612345678', score: 8, risk: 'suspicious' },
    });
  });
});

describe('the X-Reputation-Score header callblocker reads', () => {
  it('carries the score beside the verdict', async () => {
    const response = await fetch(`${server.baseUrl}/api/phone/%2B33612345678/verdict?wait=800`);
    expect(await response.text()).toBe('block\n');
    expect(response.headers.get('x-reputation-score')).toBe('8');
  });
});

describe('withheld callers as each system sends them', () => {
  it.each([
    ['Kamailio $fU of sip:anonymous@anonymous.invalid', 'anonymous'],
    ['Asterisk with no CALLERID(num) (the recipe sends anonymous)', 'anonymous'],
    ['Asterisk with a trunk that says restricted', 'restricted'],
  ])('%s', async (_label, spelling) => {
    await expectAnswers(`/api/phone/${spelling}/verdict?wait=800`, 'allow\n');
    await expectAnswers(`/api/phone/${spelling}/cid?wait=800`, 'Masqué');
  });
});

// Spellings trunks put in a caller number (E.164 without +, tel: and sip: URIs, withheld words
// inside URIs), which the systems pass on as they are.
describe('trunk spellings read by the parser', () => {
  it.each([
    ['E.164 without + (Kamailio $fU, Asterisk, FreeSWITCH from many trunks)', '33612345678'],
    ['a tel: URI with npdi', encodeURIComponent('tel:+33612345678;npdi')],
    ['a tel: URI with visual separators', encodeURIComponent('tel:+33-6-12-34-56-78')],
    ['a sip: URI with user=phone', encodeURIComponent('sip:+33612345678@trunk.example.net;user=phone')],
  ])('%s', async (_label, spelling) => {
    await expectAnswers(`/api/phone/${spelling}/verdict?wait=800`, 'block\n');
    await expectAnswers(`/api/phone/${spelling}/cid?wait=800`, 'SPAM? 8/9 Démarchage');
  });

  it('reads a withheld caller inside a sip: URI', async () => {
    await expectAnswers(`/api/phone/${encodeURIComponent('sip:anonymous@anonymous.invalid')}/verdict`, 'allow\n');
  });
});
