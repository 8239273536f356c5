// WebDAV's XML over real HTTP (RFC 4918 §8.2): an ill-formed request body is refused with a 400
// and changes nothing, and every XML answer (207 multistatus, 403 need-privileges) is well-formed,
// hostile requests included. Each answer is parsed by a strict parser that is not the service's
// own: Python's expat with namespace processing (python3 is a test prerequisite, docs/testing.md),
// which refuses what XML 1.0 and Namespaces in XML forbid.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { InMemoryOperatorLists } from '../../harness/operator-lists.js';
import { scoredSources } from '../../harness/scored-sources.js';

const PASSWORD = 'correct horse battery';
const AUTH = `Basic ${Buffer.from(`blocklist:${PASSWORD}`).toString('base64')}`;

const EXPAT_CHECK = `
import json, sys
import xml.parsers.expat
results = []
for document in json.load(sys.stdin):
    parser = xml.parsers.expat.ParserCreate(namespace_separator=' ')
    try:
        parser.Parse(document.encode('utf-8'), True)
        results.append(None)
    except xml.parsers.expat.ExpatError as error:
        results.append(str(error))
json.dump(results, sys.stdout)
`;

/** expat's verdict on each document: null when well-formed, else its error. */
function expatErrors(documents: readonly string[]): Promise<Array<string | null>> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', EXPAT_CHECK], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    let errors = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`python3 exited ${String(code)}: ${errors}`));
      else resolve(JSON.parse(output) as Array<string | null>);
    });
    child.stdin.end(JSON.stringify(documents));
  });
}

const multiget = (hrefs: readonly string[], props = '<D:getetag/><C:address-data/>'): string =>
  `<?xml version="1.0" encoding="utf-8"?><C:addressbook-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav"><D:prop>${props}</D:prop>${hrefs.map((href) => `<D:href>${href}</D:href>`).join('')}</C:addressbook-multiget>`;
const propfind = (props: string): string =>
  `<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:" xmlns:x="urn:example:other"><d:prop>${props}</d:prop></d:propfind>`;

describe('WebDAV XML, strictly', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: { FEED_PASSWORD: PASSWORD, RATE_LIMIT_MAX: '0' },
      overrides: {
        sources: scoredSources({}),
        operatorLists: new InMemoryOperatorLists([
          { rule: '+33170*', list: 'block', label: 'Plateforme <&> "démarchage"' },
          { rule: '+33612345678', list: 'block', label: 'Arnaque CPF' },
        ]),
        feedRefreshIntervalMs: 3_600_000,
      },
    });
    await server.deps.blocklistFeed?.refresh();
  });
  afterAll(async () => server.close());

  const send = async (
    method: string,
    path: string,
    body?: string,
    depth = '1',
  ): Promise<{ status: number; type: string; text: string }> => {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { authorization: AUTH, depth, 'content-type': 'application/xml; charset=utf-8' },
      ...(body === undefined ? {} : { body }),
    });
    return { status: response.status, type: response.headers.get('content-type') ?? '', text: await response.text() };
  };

  it('answers every request, hostile ones included, in XML that a strict parser reads', async () => {
    const cardHref = /<d:href>(\/carddav\/blocklist\/[^<]+\.vcf)<\/d:href>/.exec(
      (await send('PROPFIND', '/carddav/blocklist/', propfind('<d:getetag/>'))).text,
    )?.[1];
    expect(cardHref).toBeDefined();
    const exchanges: Array<[string, string, string | undefined, string]> = [
      ['PROPFIND', '/carddav/', undefined, '0'],
      ['PROPFIND', '/carddav/', undefined, '1'],
      ['PROPFIND', '/carddav/', '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>', '1'],
      ['PROPFIND', '/carddav/blocklist/', propfind('<d:getetag/><d:displayname/><d:resourcetype/><x:getctag/>'), '1'],
      // Properties named like members of every JavaScript object, and unknown ones in other namespaces.
      [
        'PROPFIND',
        '/carddav/blocklist/',
        propfind('<d:constructor/><x:tostring/><x:valueof/><x:proto/><d:getcontentlength/>'),
        '1',
      ],
      [
        'PROPFIND',
        '/carddav/',
        propfind('<d:current-user-principal/><d:principal-URL/><d:supported-report-set/>'),
        '0',
      ],
      ['REPORT', '/carddav/blocklist/', multiget([cardHref ?? '', '/carddav/blocklist/none.vcf']), '1'],
      // Hrefs the server does not have, echoed back: escaped characters, a CDATA section, non-ASCII, a ]]>.
      [
        'REPORT',
        '/carddav/blocklist/',
        multiget([
          '/carddav/blocklist/a&amp;b&lt;c&gt;.vcf',
          '<![CDATA[/carddav/blocklist/<x>&"]]>',
          '/carddav/blocklist/é™😀.vcf',
          '/x]]&gt;y',
          '&#xFFFD;&#x10FFFF;',
        ]),
        '1',
      ],
      ['REPORT', '/carddav/blocklist/', multiget([cardHref ?? ''], '<D:constructor/><C:address-data/>'), '1'],
      [
        'REPORT',
        '/carddav/blocklist/',
        '<C:addressbook-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav"><D:prop><D:getetag/></D:prop><C:filter/></C:addressbook-query>',
        '1',
      ],
      ['PUT', '/carddav/blocklist/x.vcf', 'BEGIN:VCARD', '0'],
      ['DELETE', `${cardHref ?? ''}?q=<&>"`, undefined, '0'],
      ['PROPPATCH', '/carddav/blocklist/', propfind('<d:displayname/>'), '0'],
    ];
    const answers: string[] = [];
    for (const [method, path, body, depth] of exchanges) {
      const answer = await send(method, path, body, depth);
      expect(answer.status, `${method} ${path}`).toBe(method === 'PROPFIND' || method === 'REPORT' ? 207 : 403);
      expect(answer.type, `${method} ${path}`).toMatch(/^application\/xml/);
      answers.push(answer.text);
    }
    const verdicts = await expatErrors(answers);
    for (const [index, verdict] of verdicts.entries())
      expect(
        verdict,
        `${exchanges[index]?.[0] ?? ''} ${exchanges[index]?.[1] ?? ''}: ${answers[index]?.slice(0, 400) ?? ''}`,
      ).toBeNull();
  });

  it('refuses an ill-formed body with a 400 problem, as RFC 4918 §8.2 requires, for PROPFIND and REPORT', async () => {
    const illFormed = [
      '<d:propfind xmlns:d=DAV:><d:allprop/></d:propfind>',
      '<d:propfind xmlns:d="DAV:"><d:prop><d:getetag></d:prop></d:getetag></d:propfind>',
      '<d:propfind xmlns:d="DAV:"><d:allprop/></d:prop></d:propfind>',
      '<d:propfind xmlns:d="DAV:"><d:prop>&nbsp;</d:prop></d:propfind>',
      '<d:propfind><d:allprop/></d:propfind>',
      '<d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>trailing text',
      multiget(['/carddav/blocklist/a&#1;.vcf']),
      multiget(['/carddav/blocklist/a.vcf']).replace('<D:href>', '<D:href checked>'),
    ];
    // The same bodies, by an independent strict parser: each is indeed ill-formed.
    for (const [index, verdict] of (await expatErrors(illFormed)).entries())
      expect(verdict, illFormed[index]).not.toBeNull();
    // Well-formed, but with a DTD, which a server may refuse (RFC 4918 §20.6: entity expansion attacks): refused too.
    const withDtd =
      '<?xml version="1.0"?><!DOCTYPE d:propfind [<!ENTITY big "x">]><d:propfind xmlns:d="DAV:"><d:prop>&big;</d:prop></d:propfind>';
    for (const body of [...illFormed, withDtd]) {
      for (const [method, path] of [
        ['PROPFIND', '/carddav/blocklist/'],
        ['REPORT', '/carddav/blocklist/'],
      ] as const) {
        const answer = await send(method, path, body);
        expect(answer.status, `${method} ${body}`).toBe(400);
        expect(answer.type).toMatch(/^application\/problem\+json/);
      }
    }
    // The feed still answers well-formed requests afterwards.
    expect((await send('PROPFIND', '/carddav/blocklist/', propfind('<d:getetag/>'))).status).toBe(207);
  });
});
