// The contract end to end: the real app with the real adapters, against fake upstream sites
// on loopback that serve pages and documents in each site's documented format.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_NUMBER, startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { fetchDocumented } from '../support/contracts.js';

interface Envelope {
  success: boolean;
  data: {
    number: string;
    score?: number | null;
    risk?: string;
    sources: {
      primary: { score: number | null; searches: number; commentsCount: number; commentList: unknown[] };
      community: { dangerPercent: number | null; visits: number | null; commentsCount: number; commentList: unknown[] };
      signals: { spamScore: number | null; reportsCount: number | null; callerType: string; commentList: unknown[] };
    };
  };
  meta: { sources: Record<string, { status: string; reason?: string; cache: string }>; scoreSource?: string | null };
}

// Every answer is also held to the published OpenAPI document.
async function getJson(
  server: TestServer,
  path: string,
): Promise<{ status: number; body: Envelope & Record<string, unknown> }> {
  const answer = await fetchDocumented(server, path);
  return { status: answer.status, body: JSON.parse(answer.text) as Envelope & Record<string, unknown> };
}

describe('end to end against fake upstream sites (no tellows key: HTML page)', () => {
  let sites: FakeUpstreamSites;
  let server: TestServer;
  beforeAll(async () => {
    sites = await startFakeUpstreamSites({
      scenarios: {
        '0612345678': KNOWN_NUMBER,
        '0611111111': { ...KNOWN_NUMBER, numeroinconnu: { status: 429, headers: { 'retry-after': '120' } } },
        '0622222222': {
          tellowsWeb: { status: 500 },
          numeroinconnu: { status: 503 },
          telguarder: { fixture: 'challenge.html' },
        },
        '0644444444': {
          ...KNOWN_NUMBER,
          numeroinconnu: { fixture: 'unknown.html' },
          telguarder: { fixture: 'clean-company.html' },
        },
      },
    });
    server = await startTestServer({
      env: { ...sites.env(), RATE_LIMIT_MAX: '0', SOURCE_TIMEOUT_MS: '2000', LOOKUP_TIMEOUT_MS: '3000' },
    });
  });
  afterAll(async () => {
    await server.close();
    await sites.close();
  });

  it('fills every source from the upstream pages of a known number', async () => {
    const { status, body } = await getJson(server, '/api/phone/06%2012%2034%2056%2078');
    expect(status).toBe(200);
    expect(body.data.number).toBe('0612345678');
    const { primary, community, signals } = body.data.sources;
    expect(primary.score).toBe(8);
    expect(primary.commentsCount).toBe(3);
    expect(primary.commentList.length).toBeGreaterThan(0);
    expect(community.dangerPercent).toBe(48);
    expect(community.visits).toBe(1393);
    expect(community.commentList.length).toBeGreaterThan(0);
    expect(signals.spamScore).toBe(74);
    expect(signals.reportsCount).toBe(37);
    for (const slot of ['primary', 'community', 'signals'])
      expect(body.meta.sources[slot]).toMatchObject({ status: 'ok', cache: 'miss' });
    // Never the upstream's markup: only text (a comment that *mentions* <script> stays text).
    expect(JSON.stringify(body)).not.toMatch(/<(div|p|span|a|strong|li|br|img|td)\b|class=/i);
  });

  it('tells the corrected truth of each site through the service', async () => {
    const { body } = await getJson(server, '/api/phone/0612345678');
    const { primary, community, signals } = body.data.sources as unknown as {
      primary: { searches: number; commentList: { author: string; text: string; callerType: string }[] };
      community: { visits: number | null; commentList: { text: string; date: string }[] };
      signals: { spamScore: number | null; commentList: { date: string }[] };
    };
    // telguarder: a security level of 26 is a spam score of 74; year-first dates read year-first.
    expect(signals.spamScore).toBe(74);
    expect(signals.commentList.map((comment) => comment.date)).toEqual([
      '12/03/2026',
      '01/02/2026',
      '15/01/2026',
      '03/01/2026',
    ]);
    // numeroinconnu: the views table, not the hidden locality table; the comment-item-ad comment
    // counted; the site's notices and the advert never listed.
    expect(community.visits).toBe(1393);
    expect(community.commentList).toHaveLength(4);
    expect(community.commentList.some((comment) => comment.text.startsWith('Faux conseiller bancaire'))).toBe(true);
    expect(community.commentList.some((comment) => /partenaire|retiré|Publicité/.test(comment.text))).toBe(false);
    // tellows page: searches after their label, not the sidebar; call type without its count.
    expect(primary.searches).toBe(1234);
    expect(primary.commentList.every((comment) => comment.callerType === 'Démarchage')).toBe(true);
    // Entities decoded by the parser.
    expect(primary.commentList[0]?.text).toContain('cœur');
    expect(primary.commentList[1]?.author).toBe('Jürgen');
  });

  it("answers community not_found for numeroinconnu's unknown-number page, and a clean company's level 90 as spam score 10", async () => {
    const { status, body } = await getJson(server, '/api/phone/0644444444');
    expect(status).toBe(200);
    expect(body.meta.sources.community?.status).toBe('not_found');
    expect(body.data.sources.community.commentList).toEqual([]);
    expect(body.meta.sources.signals?.status).toBe('ok');
    expect(body.data.sources.signals.spamScore).toBe(10);
  });

  it('serves a repeated lookup from the cache without calling any upstream', async () => {
    const before = sites.received.length;
    const { body } = await getJson(server, '/api/phone/0612345678/score');
    expect(sites.received.length).toBe(before);
    expect(body.data).toEqual({ number: '0612345678', score: 8, risk: 'suspicious' });
    for (const slot of ['primary', 'community', 'signals']) expect(body.meta.sources[slot]?.cache).toBe('hit');
  });

  it('answers an unknown number with 200, every slot not_found and empty', async () => {
    const { status, body } = await getJson(server, '/api/phone/0699999999');
    expect(status).toBe(200);
    for (const slot of ['primary', 'community', 'signals']) expect(body.meta.sources[slot]?.status).toBe('not_found');
    expect(body.data.sources.primary).toEqual({ score: null, searches: 0, commentsCount: 0, commentList: [] });
  });

  it('marks a slot blocked when its site answers 429, and keeps the others', async () => {
    const { status, body } = await getJson(server, '/api/phone/0611111111');
    expect(status).toBe(200);
    expect(body.meta.sources.community).toMatchObject({ status: 'blocked', reason: 'http_429' });
    expect(body.data.sources.community.dangerPercent).toBeNull();
    expect(body.meta.sources.primary?.status).toBe('ok');
    expect(body.meta.sources.signals?.status).toBe('ok');
  });

  it('during the pause after that 429, answers blocked for every number without calling the site', async () => {
    const before = sites.count('numeroinconnu');
    const { body } = await getJson(server, '/api/phone/0633333333');
    expect(body.meta.sources.community).toMatchObject({ status: 'blocked', reason: 'paused' });
    expect(sites.count('numeroinconnu')).toBe(before);
  });

  it('answers 502 with each reason when every site fails for a number', async () => {
    const { status, body } = await getJson(server, '/api/phone/0622222222');
    expect(status).toBe(502);
    expect(body.error).toBe('All data sources failed');
    expect(body.sources).toEqual({ primary: 'http_5xx', community: 'paused', signals: 'challenge' });
    // The number's own facts still come back, as in a full report.
    expect(body.number).toBe('0622222222');
    expect(body.phoneInfo).toMatchObject({ e164: '+33622222222', type: 'mobile', isNPV: false });
  });

  it('answers /info from the number alone, without a request to any site', async () => {
    const before = sites.received.length;
    const { status, body } = await getJson(server, '/api/phone/0644444444/info');
    expect(status).toBe(200);
    expect(body.data).toEqual({
      number: '0644444444',
      phoneInfo: expect.objectContaining({ national: '06 44 44 44 44', type: 'mobile' }),
    });
    expect(sites.received.length).toBe(before);
  });

  it('answers a foreign number with every source skipped (none covers it without a tellows key), calling no site', async () => {
    const before = (['tellowsWeb', 'tellowsApi', 'numeroinconnu', 'telguarder'] as const).map((site) =>
      sites.count(site),
    );
    const { status, body } = await getJson(server, '/api/phone/%2B32470123456');
    expect(status).toBe(200);
    expect(body.data.number).toBe('+32470123456');
    for (const slot of ['primary', 'community', 'signals'])
      expect(body.meta.sources[slot]).toEqual({ status: 'skipped', reason: 'not_covered' });
    expect(
      (['tellowsWeb', 'tellowsApi', 'numeroinconnu', 'telguarder'] as const).map((site) => sites.count(site)),
    ).toEqual(before);
  });
});

describe('end to end with a tellows partner key', () => {
  it('uses the partner API with the hashed key in X-Auth-Token, never the key itself', async () => {
    const sites = await startFakeUpstreamSites({ scenarios: { '0612345678': KNOWN_NUMBER } });
    const server = await startTestServer({
      env: { ...sites.env(), RATE_LIMIT_MAX: '0', TELLOWS_API_KEY: 'secret-partner-key' },
    });
    try {
      const { status, body } = await getJson(server, '/api/phone/0612345678');
      expect(status).toBe(200);
      expect(body.data.sources.primary.score).toBe(8);
      const apiCall = sites.received.find((request) => request.url.startsWith('/basic/num/'));
      expect(apiCall?.headers['x-auth-token']).toMatch(/^[0-9a-f]{32}$/);
      expect(JSON.stringify(sites.received)).not.toContain('secret-partner-key');
    } finally {
      await server.close();
      await sites.close();
    }
  });
});
