// Every URL the recipes in docs/integrations/ give, with the number spellings each system sends,
// through the real server over HTTP (fake upstream sites on loopback). The dialplans themselves
// are not run here, except Kamailio's (test/system/kamailio-sip.test.ts): this is the HTTP side
// of each recipe, byte for byte what the system receives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_NUMBER, startFakeUpstreamSites, type FakeUpstreamSites } from '../support/upstream-sites.js';
import { startTestServer, type TestServer } from '../support/servers.js';
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

// Spellings today's parser reads.
describe.each([
  // Kamailio: $fU, the user part of the From URI (examples/kamailio/kamailio.cfg, WAIT_MS 800).
  ['Kamailio $fU', '/api/phone/{n}/verdict?wait=800', ['0612345678', '+33612345678', '0033612345678']],
  // Asterisk/FreePBX: ${URIENCODE(${CALLERID(num)})}, national or +33 (encoded %2B).
  ['Asterisk CURL() on /verdict', '/api/phone/{n}/verdict?wait=800', ['0612345678', '%2B33612345678']],
  ['Asterisk CALLERID(name) from /cid', '/api/phone/{n}/cid?wait=800', ['0612345678', '%2B33612345678']],
  ['FreePBX Superfecta regular-expression source ($thenumber)', '/api/phone/{n}/cid?wait=2000', ['0612345678', '%2B33612345678']],
  // FreeSWITCH: ${caller_id_number} as it is, in mod_cidlookup's url and in mod_curl.
  ['FreeSWITCH mod_cidlookup url', '/api/phone/{n}/cid?wait=1500', ['0612345678', '+33612345678', '0033612345678']],
  ['FreeSWITCH mod_curl', '/api/phone/{n}/verdict?wait=800', ['0612345678', '+33612345678', '0033612345678']],
  // 3CX shows /cid's line in systems that take a raw body; its template itself reads /score (below).
  ['3CX (/cid alternative)', '/api/phone/{n}/cid?wait=1500', ['%2B33612345678']],
  // callblocker: E.164, quoted by the script (urllib.parse.quote(number, safe='')).
  ['callblocker /verdict', '/api/phone/{n}/verdict?wait=2000', ['%2B33612345678']],
  ['callblocker /cid', '/api/phone/{n}/cid?wait=2000', ['%2B33612345678']],
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
    expect(await response.json()).toMatchObject({ success: true, data: { number: '0612345678', score: 8, risk: 'suspicious' } });
  });
});

describe('the X-Reputation-Score header callblocker reads', () => {
  it('carries the score beside the verdict', async () => {
    const response = await fetch(`${server.baseUrl}/api/phone/%2B33612345678/verdict?wait=2000`);
    expect(await response.text()).toBe('block\n');
    expect(response.headers.get('x-reputation-score')).toBe('8');
  });
});

describe('withheld callers as each system sends them', () => {
  it.each([
    ['Kamailio $fU of sip:anonymous@anonymous.invalid', 'anonymous'],
    ['Asterisk with no CALLERID(num) (the recipe sends anonymous)', 'anonymous'],
    ['a trunk that says restricted', 'restricted'],
    ['FreeSWITCH withheld caller_id_number', 'Anonymous'],
    ['3CX', 'Unknown'],
  ])('%s', async (_label, spelling) => {
    await expectAnswers(`/api/phone/${spelling}/verdict?wait=800`, 'allow\n');
    await expectAnswers(`/api/phone/${spelling}/cid?wait=800`, 'Masqué');
  });
});

// Spellings the parser work of issue 21 adds (E.164 without +, tel: and sip: URIs, withheld
// words inside URIs). These pass once that work is merged.
describe('trunk spellings read by the parser (issue 21 parser work)', () => {
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
