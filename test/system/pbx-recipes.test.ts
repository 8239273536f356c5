// Each recipe of docs/integrations/ as written there, run the way its product runs it
// (test/support/pbx-products.ts reproduces each product from its source), against the real
// service and against a service that answers 429, 503, nothing at all, or is down:
// - a blocked caller is refused;
// - every other call goes on within the recipe's stated bound, whatever the service answers;
// - the caller's name comes only from a 200 /cid line;
// - nothing loops.
// Then each recipe's one-line `curl` check is run as printed and must answer what the page shows.
// In the system project: it runs python3 and curl as child processes.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveOnLoopback, type LoopbackHttp } from '../../harness/loopback.js';
import {
  callblockerCommand,
  cidlookupName,
  cidlookupUrl,
  freeswitchRegexApi,
  huntFreeswitchDialplan,
  integrationPage,
  parseAsteriskConf,
  parseSuperfectaSettings,
  phpPregMatch,
  productGet,
  readCallblockerSettings,
  recipeBlock,
  recipeBlocks,
  runAsteriskContext,
  runCallblockerCheck,
  runSuperfectaRegularExpressions,
  runThreeCxTemplate,
  toBinary,
  type ProductRequestLog,
} from '../support/pbx-products.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { KNOWN_NUMBER, startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';

const DOC_BASE = 'http://10.0.0.5:3000';
const BLOCKED = '+33612345678'; // tellows 8 in the fake sites: block, "SPAM? 8/9 Démarchage"
const UNKNOWN = '+33698765432'; // no source knows it: unknown, "Pas de note"
const CALLBLOCKER_SCRIPTS = fileURLToPath(new URL('../../examples/callblocker', import.meta.url));

/** The longest a recipe may hold a call, as each page states it. */
const STATED_BOUND_MS = { asterisk: 4000, freeswitch: 4000, callblocker: 3600 };

// A problem answer as the service writes one, for the stand-ins below.
const problem = (status: number, title: string): string =>
  JSON.stringify({
    type: 'about:blank',
    title,
    status,
    detail: `${title}.`,
    code: status === 429 ? 'rate_limited' : 'unavailable',
  });

interface Services {
  real: TestServer;
  tooMany: LoopbackHttp;
  unavailable: LoopbackHttp;
  /** Answers /verdict ("allow"), then 429 for /cid: the name must not become the 429 body. */
  limitedAfterVerdict: LoopbackHttp;
  /** Accepts connections and never answers. */
  hanging: LoopbackHttp;
  /** A port nobody listens on. */
  downUrl: string;
}

let sites: FakeUpstreamSites;
let services: Services;

beforeAll(async () => {
  sites = await startFakeUpstreamSites({ scenarios: { '0612345678': KNOWN_NUMBER } });
  const real = await startTestServer({
    env: { ...sites.env(), TELLOWS_API_KEY: 'test-partner-key', RATE_LIMIT_MAX: '0' },
  });
  const answerWith = (status: number, title: string): Promise<LoopbackHttp> =>
    serveOnLoopback((_request, response) => {
      response
        .writeHead(status, { 'content-type': 'application/problem+json', 'retry-after': '30' })
        .end(problem(status, title));
    });
  const down = await serveOnLoopback(() => undefined);
  await down.close();
  services = {
    real,
    tooMany: await answerWith(429, 'Too Many Requests'),
    unavailable: await answerWith(503, 'Service Unavailable'),
    limitedAfterVerdict: await serveOnLoopback((request, response) => {
      if (request.url?.includes('/verdict'))
        response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('allow\n');
      else
        response.writeHead(429, { 'content-type': 'application/problem+json' }).end(problem(429, 'Too Many Requests'));
    }),
    hanging: await serveOnLoopback(() => undefined),
    downUrl: down.url,
  };
});

afterAll(async () => {
  await Promise.all([
    services.real.close(),
    services.tooMany.close(),
    services.unavailable.close(),
    services.limitedAfterVerdict.close(),
    services.hanging.close(),
  ]);
  await sites.close();
});

/** A recipe's text with the documentation's service address replaced by `base`. */
const pointedAt = (text: string, base: string): string => text.replaceAll(DOC_BASE, base);

/** Path and query of each request, as the service received them. */
const requestTargets = (requests: ProductRequestLog[]): string[] =>
  requests.map((request) => request.url.replace(/^http:\/\/[^/]+/, ''));

const worstCaseMs = (requests: ProductRequestLog[]): number =>
  requests.reduce((sum, request) => sum + request.boundMs, 0);

/** Every way the service can fail to give a line, by name. */
const failingServices = (): [string, string][] => [
  ['answers 429', services.tooMany.url],
  ['answers 503', services.unavailable.url],
  ['answers /verdict then 429 for /cid', services.limitedAfterVerdict.url],
  ['is down', services.downUrl],
  ['never answers', services.hanging.url],
];

describe('Asterisk (docs/integrations/asterisk.md)', () => {
  const conf = (): string => recipeBlock('asterisk.md', 'ini extensions.conf');
  const call = (base: string, number: string) =>
    runAsteriskContext(pointedAt(conf(), base), 'phone-reputation', '0140000000', { number, name: 'Trunk name' });

  it('refuses a blocked caller after asking /verdict as URIENCODE spells the number', async () => {
    const outcome = await call(services.real.baseUrl, BLOCKED);
    expect(outcome).toMatchObject({ application: 'Hangup', data: '21' });
    expect(requestTargets(outcome.requests)).toEqual(['/api/phone/%2B33612345678/verdict?wait=800']);
  });

  it('rings any other caller with the /cid line as its name', async () => {
    const outcome = await call(services.real.baseUrl, UNKNOWN);
    expect(outcome).toMatchObject({ application: 'Dial', data: 'PJSIP/100,30', callerIdName: 'Pas de note' });
    expect(requestTargets(outcome.requests)).toEqual([
      '/api/phone/%2B33698765432/verdict?wait=800',
      '/api/phone/%2B33698765432/cid?wait=800',
    ]);
  });

  it('asks about a caller without a number as anonymous', async () => {
    const outcome = await call(services.real.baseUrl, '');
    expect(outcome).toMatchObject({ application: 'Dial', callerIdName: 'Masqué' });
    expect(requestTargets(outcome.requests)[0]).toBe('/api/phone/anonymous/verdict?wait=800');
  });

  it('rings within the stated bound and keeps the trunk name whatever else the service does', async () => {
    for (const [label, base] of failingServices()) {
      const outcome = await call(base, BLOCKED);
      expect(outcome, label).toMatchObject({ application: 'Dial', callerIdName: 'Trunk name' });
      expect(worstCaseMs(outcome.requests), label).toBeLessThanOrEqual(STATED_BOUND_MS.asterisk);
    }
  });

  it('reproduces CURL(): trailing white space trimmed, the body kept whatever the status', async () => {
    const dialplan = `[t]\nexten => s,1,Set(CURLOPT(httptimeout)=2)\n same => n,Set(CALLERID(name)=[\${CURL(${services.real.baseUrl}/api/phone/${encodeURIComponent(BLOCKED)}/verdict)}])\n same => n,Dial(x)\n`;
    expect((await runAsteriskContext(dialplan, 't', 's', { number: '', name: '' })).callerIdName).toBe('[block]');
    const limited = dialplan.replace(services.real.baseUrl, services.tooMany.url);
    expect((await runAsteriskContext(limited, 't', 's', { number: '', name: '' })).callerIdName).toBe(
      `[${problem(429, 'Too Many Requests')}]`,
    );
    // Without a timeout CURL() may wait 180 s: the interpreter refuses to pretend otherwise.
    await expect(
      runAsteriskContext(dialplan.replace(/.*CURLOPT.*\n/, 'exten => s,1,NoOp()\n'), 't', 's', {
        number: '',
        name: '',
      }),
    ).rejects.toThrow(/180 s/);
  });

  it('would show a 429 body as the name without the guard on the first character', async () => {
    const unguarded = conf().replace(/^.*FILTER\(A-Za-z.*\n/m, '');
    const outcome = await runAsteriskContext(
      pointedAt(unguarded, services.limitedAfterVerdict.url),
      'phone-reputation',
      '0140000000',
      { number: BLOCKED, name: 'Trunk name' },
    );
    expect(outcome.callerIdName).toBe(problem(429, 'Too Many Requests'));
  });
});

describe('FreePBX (docs/integrations/asterisk.md)', () => {
  const conf = (): string => recipeBlock('asterisk.md', 'ini extensions_custom.conf');
  // FreePBX's own contexts: a header for one of them adds to it, a Goto into the inbound ones
  // (from-trunk includes from-pstn, which leads to ext-did) comes back to the same route.
  const FREEPBX_INBOUND = /^(from-trunk|from-pstn|ext-did|from-did-direct-ivr|from-pstn-custom|from-internal)(-.*)?$/;

  it('adds a context of its own and leaves to a destination that does not re-enter the inbound routes', () => {
    const contexts = [...parseAsteriskConf(conf()).keys()];
    expect(contexts).toEqual(['phone-reputation-screen']);
    for (const context of contexts) expect(context).not.toMatch(FREEPBX_INBOUND);
    const gotos = [...conf().matchAll(/Goto\(([^,)]+),/g)].map((match) => match[1]);
    expect(gotos.length).toBeGreaterThan(0);
    for (const target of gotos) {
      expect(target).not.toMatch(FREEPBX_INBOUND);
      expect(target).not.toBe('phone-reputation-screen');
    }
  });

  it('refuses a blocked caller and sends the others on with the /cid line as name, whatever the service does', async () => {
    const run = (base: string, number: string) =>
      runAsteriskContext(pointedAt(conf(), base), 'phone-reputation-screen', 's', { number, name: 'Trunk name' });
    expect(await run(services.real.baseUrl, BLOCKED)).toMatchObject({ application: 'Hangup', data: '21' });
    expect(await run(services.real.baseUrl, UNKNOWN)).toMatchObject({
      application: 'Goto',
      data: 'from-did-direct,100,1',
      callerIdName: 'Pas de note',
    });
    for (const [label, base] of failingServices()) {
      const outcome = await run(base, BLOCKED);
      expect(outcome, label).toMatchObject({ application: 'Goto', callerIdName: 'Trunk name' });
      expect(worstCaseMs(outcome.requests), label).toBeLessThanOrEqual(STATED_BOUND_MS.asterisk);
    }
  });
});

describe('Superfecta (docs/integrations/asterisk.md)', () => {
  const source = () => parseSuperfectaSettings(recipeBlock('asterisk.md', 'text superfecta'));

  it('puts $thenumber in the URL as it is, + and all, and takes the whole line as the name', async () => {
    const settings = source();
    const { name, requests } = await runSuperfectaRegularExpressions(
      { ...settings, url: pointedAt(settings.url, services.real.baseUrl) },
      BLOCKED,
    );
    expect(requestTargets(requests)).toEqual(['/api/phone/+33612345678/cid?wait=2000']);
    expect(name).toBe('SPAM? 8/9 Démarchage');
  });

  it('gives no name when the service answers 429 or 503 (CURLOPT_FAILONERROR)', async () => {
    for (const base of [services.tooMany.url, services.unavailable.url]) {
      const settings = source();
      expect(
        (await runSuperfectaRegularExpressions({ ...settings, url: pointedAt(settings.url, base) }, BLOCKED)).name,
      ).toBeNull();
    }
  });

  it('matches a 30-character line with accents, which a byte-counting .{1,30} and a slashed expression do not', async () => {
    const line = 'SPAM? 9/9 Démarchage téléphoné'; // 30 characters, 33 bytes
    const stub = await serveOnLoopback((_request, response) =>
      response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(line),
    );
    try {
      const settings = { ...source(), url: `${stub.url}/api/phone/$thenumber/cid` };
      expect((await runSuperfectaRegularExpressions(settings, BLOCKED)).name).toBe(line);
      expect(
        (await runSuperfectaRegularExpressions({ ...settings, regularExpressions: '^(.{1,30})$' }, BLOCKED)).name,
      ).toBeNull();
      expect(
        (await runSuperfectaRegularExpressions({ ...settings, regularExpressions: '/^(.+)$/' }, BLOCKED)).name,
      ).toBeNull();
    } finally {
      await stub.close();
    }
    // The same as preg_match: without u a dot is a byte, with u a character.
    expect(phpPregMatch('/^(.{1,30})$/', toBinary(line))).toBeNull();
    expect(phpPregMatch('/^(.{1,30})$/u', toBinary(line))).not.toBeNull();
  });
});

describe('FreeSWITCH (docs/integrations/freeswitch.md)', () => {
  const dialplan = (): string => recipeBlock('freeswitch.md', 'xml dialplan/public/00_phone_reputation.xml');
  const hunt = (base: string, callerIdNumber: string) =>
    huntFreeswitchDialplan(pointedAt(dialplan(), base), {
      caller_id_number: callerIdNumber,
      caller_id_name: 'Trunk name',
      destination_number: '0140000000',
    });

  it('loads mod_curl and sits in the public context', () => {
    expect(recipeBlock('freeswitch.md', 'xml autoload_configs/modules.conf.xml')).toContain(
      '<load module="mod_curl"/>',
    );
    const dialplanFiles = recipeBlocks('freeswitch.md').filter((block) => block.info.startsWith('xml dialplan/'));
    expect(dialplanFiles.map((block) => block.info)).toEqual(['xml dialplan/public/00_phone_reputation.xml']);
    // It never transfers: the call goes on to the rest of public, so nothing can run twice.
    expect(dialplan()).not.toMatch(/application="transfer"/);
  });

  it('refuses a blocked caller during the hunt', async () => {
    const call = await hunt(services.real.baseUrl, BLOCKED);
    expect(call.stopped).toBe(true);
    expect(call.executed).toEqual([{ application: 'respond', data: '603 Decline' }]);
    expect(requestTargets(call.requests)).toEqual(['/api/phone/+33612345678/verdict?wait=800']);
  });

  it('lets any other caller go on with the /cid line as its name', async () => {
    const call = await hunt(services.real.baseUrl, UNKNOWN);
    expect(call.stopped).toBe(false);
    expect(call.executed).toEqual([]);
    expect(call.variables.get('effective_caller_id_name')).toBe('Pas de note');
  });

  it('never asks about a withheld caller, so never requests /api/phone//…', async () => {
    for (const withheld of ['', 'anonymous', 'Anonymous']) {
      const call = await hunt(services.real.baseUrl, withheld);
      expect(call.requests, withheld).toEqual([]);
      expect(call.stopped).toBe(false);
    }
  });

  it('goes on within the stated bound and sets no name whatever else the service does', async () => {
    for (const [label, base] of failingServices()) {
      const call = await hunt(base, BLOCKED);
      expect(call.stopped, label).toBe(false);
      expect(call.variables.has('effective_caller_id_name'), label).toBe(false);
      expect(worstCaseMs(call.requests), label).toBeLessThanOrEqual(STATED_BOUND_MS.freeswitch);
    }
  });

  it('never refuses anyone when the actions are not inline: conditions are evaluated before they run', async () => {
    const late = dialplan().replaceAll(' inline="true"', '');
    const call = await huntFreeswitchDialplan(pointedAt(late, services.real.baseUrl), {
      caller_id_number: BLOCKED,
      caller_id_name: '',
      destination_number: '1',
    });
    expect(call.executed.some((action) => action.application === 'respond')).toBe(false);
  });

  it('reproduces the regex API splitting on |: an alternation in it never matches', () => {
    expect(freeswitchRegexApi('block\n|^(block|warn|allow|unknown)|%1')).toBe('');
    expect(freeswitchRegexApi('block\n|^(block)|%1')).toBe('block');
  });

  it('shows why mod_cidlookup is not used: digits only, an empty number for anonymous, any body as the name whatever the status', async () => {
    const url = `${services.real.baseUrl}/api/phone/\${caller_id_number}/cid?wait=800`;
    expect(cidlookupUrl(url, BLOCKED)).toBe(`${services.real.baseUrl}/api/phone/33612345678/cid?wait=800`);
    const digits = await productGet(cidlookupUrl(url, BLOCKED), { connectTimeoutMs: 2000, totalTimeoutMs: 2000 });
    expect(cidlookupName(digits)).toBe('SPAM? 8/9 Démarchage');
    expect(cidlookupUrl(url, 'anonymous')).toBe(`${services.real.baseUrl}/api/phone//cid?wait=800`);
    const withheld = await productGet(cidlookupUrl(url, 'anonymous'), { connectTimeoutMs: 2000, totalTimeoutMs: 2000 });
    expect(cidlookupName(withheld)).toBe('Numéro invalide');
    const limited = await productGet(`${services.tooMany.url}/api/phone/33612345678/cid`, {
      connectTimeoutMs: 2000,
      totalTimeoutMs: 2000,
    });
    expect(cidlookupName(limited)).toBe(problem(429, 'Too Many Requests'));
    const page = integrationPage('freeswitch.md');
    expect(
      recipeBlocks('freeswitch.md').some(
        (block) => block.body.includes('cidlookup.conf') || block.body.includes('whitepages-apikey'),
      ),
    ).toBe(false);
    expect(page).toContain('string_digitsonly()');
  });
});

describe('3CX (docs/integrations/3cx.md)', () => {
  it('asks /score for [Number] URL-encoded and returns a contact with the number and a URL', async () => {
    const template = recipeBlock('3cx.md', 'xml phone-reputation.xml');
    const { outputs, requests } = await runThreeCxTemplate(template, BLOCKED, services.real.baseUrl);
    expect(requestTargets(requests)).toEqual(['/api/phone/%2B33612345678/score?wait=1500']);
    expect(outputs).toEqual({
      ContactID: BLOCKED,
      FirstName: 'suspicious',
      LastName: '8/9',
      PhoneBusiness: BLOCKED,
      ContactUrl: `${services.real.baseUrl}/?number=0612345678`,
    });
  });

  it('returns no contact when the service answers anything but a rated 200', async () => {
    const template = recipeBlock('3cx.md', 'xml phone-reputation.xml');
    for (const base of [services.tooMany.url, services.unavailable.url, services.downUrl])
      expect((await runThreeCxTemplate(template, BLOCKED, base)).outputs).toBeNull();
    expect((await runThreeCxTemplate(template, UNKNOWN, services.real.baseUrl)).outputs).toBeNull();
  });
});

describe('callblocker (docs/integrations/callblocker.md, examples/callblocker/)', () => {
  const settingsFor = (base: string) =>
    readCallblockerSettings(pointedAt(recipeBlock('callblocker.md', 'json settings.json'), base));

  it('reads the credentials at the top level and finds the script by the phone’s online_check', () => {
    const settings = settingsFor(services.real.baseUrl);
    const phone = settings.phones[0];
    expect(phone?.onlineCheck).toBe('phone_reputation');
    expect(existsSync(`${CALLBLOCKER_SCRIPTS}/onlinecheck_${phone?.onlineCheck ?? ''}.py`)).toBe(true);
    expect(callblockerCommand(settings, 'phone_reputation', BLOCKED, '/usr/share/callblocker')).toBe(
      `/usr/share/callblocker/onlinecheck_phone_reputation.py --number ${BLOCKED} --url=${services.real.baseUrl} --wait=800 2>&1`,
    );
  });

  it('runs the script as Block.cpp does and reads spam, name and score from it', async () => {
    const settings = settingsFor(services.real.baseUrl);
    const blocked = await runCallblockerCheck(
      callblockerCommand(settings, 'phone_reputation', BLOCKED, CALLBLOCKER_SCRIPTS),
    );
    expect(blocked.read).toEqual({ spam: true, name: 'SPAM? 8/9 Démarchage', score: 8 });
    const unknown = await runCallblockerCheck(
      callblockerCommand(settings, 'phone_reputation', UNKNOWN, CALLBLOCKER_SCRIPTS),
    );
    expect(unknown.read).toMatchObject({ spam: false });
  });

  it('says not spam, in JSON and within the stated bound, whatever else the service does', async () => {
    // In parallel: each is a python3 start, slow on a loaded machine.
    const results = await Promise.all(
      failingServices().map(async ([label, base]) => ({
        label,
        result: await runCallblockerCheck(
          callblockerCommand(settingsFor(base), 'phone_reputation', BLOCKED, CALLBLOCKER_SCRIPTS),
        ),
      })),
    );
    for (const { label, result } of results)
      expect(result.read, `${label}: ${result.output}`).toEqual({ spam: false, name: '', score: 0 });
    // Two requests of wait + 1 s at most, as the page states.
    expect(2 * (800 + 1000)).toBeLessThanOrEqual(STATED_BOUND_MS.callblocker);
  });

  it('fails loudly, not with a silent "not spam", when the credentials sit inside the phone', async () => {
    const misplaced = JSON.parse(recipeBlock('callblocker.md', 'json settings.json')) as {
      phones: Record<string, unknown>[];
      online_credentials?: unknown;
    };
    const phone = misplaced.phones[0] ?? {};
    phone.online_credentials = misplaced.online_credentials;
    delete misplaced.online_credentials;
    const settings = readCallblockerSettings(JSON.stringify(misplaced));
    expect(settings.credentials).toEqual([]);
    const result = await runCallblockerCheck(
      callblockerCommand(settings, 'phone_reputation', BLOCKED, CALLBLOCKER_SCRIPTS),
    );
    expect(result.exitCode).not.toBe(0);
    expect(result.read).toBeNull();
  });
});

describe('each recipe’s one-line check', () => {
  const run = (command: string): Promise<string> =>
    new Promise((resolve, reject) => {
      execFile('/bin/sh', ['-c', command], { timeout: 10_000 }, (error, stdout) =>
        error === null ? resolve(stdout) : reject(new Error(`${command}: ${error.message}`)),
      );
    });

  it.each(['asterisk.md', 'freeswitch.md', '3cx.md', 'callblocker.md'])(
    '%s: the printed curl gets the printed answer',
    async (page) => {
      const command = recipeBlock(page, 'sh check').trim();
      expect(command.split('\n')).toHaveLength(1);
      expect(command).toMatch(/^curl /);
      // It is the last thing on the page.
      const blocks = recipeBlocks(page);
      expect(blocks.at(-1)?.info).toBe('text answer');
      expect(blocks.at(-2)?.info).toBe('sh check');
      expect(await run(pointedAt(command, services.real.baseUrl))).toBe(recipeBlock(page, 'text answer'));
    },
  );
});
