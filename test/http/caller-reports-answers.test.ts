// Every answer uses the reports' evidence (docs/reports.md, "In the answers"), through the real app
// over the real engine with an injected clock, the real front cache and a real lists file; the
// reports are an in-memory CallerReports whose evidence each test sets (harness/caller-reports.ts),
// and the sources are in-process stand-ins that count the lookups they are asked. Precedence: the
// operator's lists, then the reports, then the score.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { verdictRuleOf } from '../../src/composition.js';
import { createLookupService, type EngineLookupService } from '../../src/domain/lookup/lookup-service.js';
import { createPhoneNumberParser } from '../../src/domain/numbering/parse-phone-number.js';
import type { SourceDataBySlot } from '../../src/domain/report.js';
import { createFrontCache, type FrontCache } from '../../src/http/front-cache.js';
import { createMemorySourceCache } from '../../src/infra/cache/memory-cache.js';
import { createKeyedHasher } from '../../src/infra/hash.js';
import { openListStore } from '../../src/infra/lists/open-list-store.js';
import type { ListStore } from '../../src/infra/lists/list-store.js';
import { createMemoryRateLimitStore } from '../../src/infra/rate-limit/rate-limit-store.js';
import { expectDocumentedAnswer } from '../support/contracts.js';
import { evidenceOf, InMemoryCallerReports } from '../../harness/caller-reports.js';
import { fakeSource, SAMPLE_DATA, START_TIME_MS, TEST_CONFIG } from '../../harness/lookup.js';
import { testNumberingPlan } from '../../harness/servers.js';

const SECRET = 'caller-reports-test-secret-0123';
// The sources score every number 8 (a block by the score) but these.
const LOW_SCORE = '+33612345602'; // score 2: allowed by the score
const FAILING = '+33612345605'; // every source fails: the JSON routes answer 502
const SPAMMER = '0612345601';
const SUSPECT = '0612345602';
const DOCTOR = '0612345603';
const LATE = '0612345604';
const ALLOWED = '0612345606';

const SPAM = evidenceOf('spam', { fraud: 2, advertising: 1, legitimate: 1 });

describe('the reports in every answer', () => {
  let app: FastifyInstance;
  let engine: EngineLookupService;
  let front: FrontCache;

  let lists: ListStore;
  const clock = { nowMs: START_TIME_MS };
  const reports = new InMemoryCallerReports();
  /** The numbers (E.164) the sources were asked about, in order. */
  const asked: string[] = [];
  const responder =
    <S extends 'primary' | 'community' | 'signals'>(slot: S) =>
    (number: { e164: string }) => {
      asked.push(number.e164);
      if (number.e164 === FAILING) return { status: 'error' as const, reason: 'http_5xx' as const };
      const data = structuredClone<SourceDataBySlot[S]>(SAMPLE_DATA[slot]);
      if (number.e164 === LOW_SCORE && slot === 'primary') (data as SourceDataBySlot['primary']).score = 2;
      return { status: 'ok' as const, data };
    };

  beforeAll(async () => {
    const hashKey = createKeyedHasher(SECRET);
    front = createFrontCache({ maxBytes: 1024 * 1024 });
    engine = createLookupService({
      sources: {
        primary: fakeSource('primary', responder('primary')),
        community: fakeSource('community', responder('community')),
        signals: fakeSource('signals', responder('signals')),
      },
      cache: createMemorySourceCache({ maxEntries: 1000 }),
      hashKey,
      timings: TEST_CONFIG,
      now: () => clock.nowMs,
      random: () => 0.5,
      resilience: { retryMinRemainingMs: 1_000_000 },
      onSlotWritten: (numberHash) => front.invalidate(numberHash),
    });
    const file = join(mkdtempSync(join(tmpdir(), 'phone-rep-reports-answers-')), 'lists.csv');
    writeFileSync(
      file,
      `rule,list,label,note,expiresAt,createdAt\n+33612345606,allow,,,,2026-01-01T00:00:00.000Z\n+225*,block,,,,2026-01-01T00:00:00.000Z\n`,
    );
    const parsePhoneNumber = createPhoneNumberParser(testNumberingPlan(), 'FR');
    lists = await openListStore(
      { listsFile: file, listsFileSet: true, redisKeyPrefix: 'unused:', redisCommandTimeoutMs: 1000 },
      { context: { parsePhoneNumber, defaultRegion: 'FR' }, hashKey, watch: false },
    );
    const config = loadConfig({ HASH_SECRET: SECRET, RATE_LIMIT_MAX: '0' });
    app = await buildApp({
      config,
      parsePhoneNumber,
      lookupService: engine,
      rateLimitStore: createMemoryRateLimitStore(),
      hashKey,
      verdictRule: verdictRuleOf(config),
      frontCache: front,
      now: () => clock.nowMs,
      lists,
      reports,
      webPage: false,
    });
    reports.set('+33612345601', SPAM);
    reports.set('+33612345602', evidenceOf('suspect', { poll: 1 }));
    reports.set('+33612345603', evidenceOf('legitimate', { legitimate: 3, advertising: 1 }));
    reports.set('+33612345605', evidenceOf('suspect', { fraud: 1 }));
    reports.set('+33612345606', SPAM);
  });
  afterAll(async () => {
    engine.close();
    await app.close();
    await lists.close();
  });

  async function get(path: string) {
    const response = await app.inject({ method: 'GET', url: path });
    await expectDocumentedAnswer(app, {
      method: 'GET',
      path,
      status: response.statusCode,
      contentType: String(response.headers['content-type']),
      body: response.body,
      headers: response.headers,
    });
    return response;
  }

  it('answers the text routes of a number reported as spam at once, with no source asked', async () => {
    asked.length = 0;
    const verdict = await get(`/api/phone/${SPAMMER}/verdict`);
    expect(verdict.body).toBe('block\n');
    expect(verdict.headers['x-caller-reports']).toBe('spam');
    expect(verdict.headers['cache-control']).toBe('no-store');
    // The two fraud votes name the category; the advertising vote counts among the spam reporters.
    expect((await get(`/api/phone/${SPAMMER}/cid`)).body).toBe('SIGNALÉ 3× Arnaque');
    expect((await get(`/api/phone/${SPAMMER}/cid?lang=en`)).body).toBe('REPORTED 3× Fraud');
    expect((await get(`/api/phone/${SPAMMER}/verdict?cid=en`)).body).toBe('block\nREPORTED 3× Fraud\n');
    expect(asked).toEqual([]);
  });

  it('still looks a reported number up for the JSON answers, which carry meta.reports', async () => {
    asked.length = 0;
    const report = await get(`/api/phone/${SPAMMER}`);
    expect(report.statusCode).toBe(200);
    expect(report.json().meta.reports).toEqual(SPAM);
    expect(report.json().meta.list).toBeNull();
    expect(report.json().meta.score).toBe(8);
    expect(report.headers['cache-control']).toBe('no-store');
    expect(asked).toContain('+33612345601');
    const score = await get(`/api/phone/${SPAMMER}/score`);
    expect(score.json().meta.reports).toEqual(SPAM);
    expect(score.json().data.score).toBe(8);
  });

  it('warns at least for a number reported below the bar, and shows the reports’ line', async () => {
    const verdict = await get(`/api/phone/${SUSPECT}/verdict`);
    expect(verdict.body).toBe('warn\n');
    // The score is still said in the headers: a lookup answered.
    expect(verdict.headers['x-reputation-score']).toBe('2');
    expect((await get(`/api/phone/${SUSPECT}/cid`)).body).toBe('SIGNALÉ 1× Sondage');
    expect((await get(`/api/phone/${SUSPECT}/score`)).json().meta.reports.verdict).toBe('suspect');
  });

  it('does not block a number reported legitimate on the score alone', async () => {
    expect((await get(`/api/phone/${DOCTOR}/verdict`)).body).toBe('warn\n');
    expect((await get(`/api/phone/${DOCTOR}/cid?lang=en`)).body).toBe('REPORTED SAFE 3×');
    // The control: the same score without reports blocks.
    expect((await get(`/api/phone/0612345699/verdict`)).body).toBe('block\n');
  });

  it('lets the operator’s allow list decide over a spam report', async () => {
    asked.length = 0;
    const verdict = await get(`/api/phone/${ALLOWED}/verdict`);
    expect(verdict.body).toBe('allow\n');
    expect(verdict.headers['x-operator-list']).toBe('allow');
    expect(verdict.headers['x-caller-reports']).toBeUndefined();
    expect(asked).toEqual([]);
    const report = await get(`/api/phone/${ALLOWED}`);
    expect(report.json().meta.list).toEqual({ list: 'allow', rule: '+33612345606', label: null });
    // Kept for review: the JSON answer still says what the reporters said.
    expect(report.json().meta.reports).toEqual(SPAM);
  });

  it('carries meta.reports on a 502, as documented', async () => {
    const report = await get('/api/phone/0612345605');
    expect(report.statusCode).toBe(502);
    expect(report.json().meta).toEqual({ list: null, reports: evidenceOf('suspect', { fraud: 1 }) });
    // The text answer still follows the reports.
    expect((await get('/api/phone/0612345605/verdict')).body).toBe('warn\n');
  });

  it('says reports: null where nobody reported the number, on a 200 and on a 400 under a block rule', async () => {
    expect((await get('/api/phone/0612345699')).json().meta.reports).toBeNull();
    const refused = await get('/api/phone/%2B2250102');
    expect(refused.statusCode).toBe(400);
    expect(refused.json().meta).toEqual({ list: { list: 'block', rule: '+225*', label: null }, reports: null });
  });

  it('sees a new report past the front cache: a held answer is not served once the number has evidence', async () => {
    // First lookup fetches; the next all-fresh one is held in the front cache.
    await get(`/api/phone/${LATE}`);
    clock.nowMs += 1000;
    const held = await get(`/api/phone/${LATE}`);
    expect(held.headers.etag).toBeDefined();
    expect(held.json().meta.reports).toBeNull();
    const heldVerdict = await get(`/api/phone/${LATE}/verdict`);
    expect(heldVerdict.body).toBe('block\n');
    expect(heldVerdict.headers['x-caller-reports']).toBeUndefined();

    reports.set('+33612345604', evidenceOf('legitimate', { legitimate: 2 }));
    const after = await get(`/api/phone/${LATE}`);
    expect(after.json().meta.reports).toEqual(evidenceOf('legitimate', { legitimate: 2 }));
    expect(after.headers.etag).toBeUndefined();
    expect(after.headers['cache-control']).toBe('no-store');
    expect((await get(`/api/phone/${LATE}/verdict`)).body).toBe('warn\n');
    expect((await get(`/api/phone/${LATE}/cid`)).body).toBe('SIGNALÉ FIABLE 2×');

    // The evidence gone, the held answer is served again.
    reports.set('+33612345604', null);
    const again = await get(`/api/phone/${LATE}`);
    expect(again.json().meta.reports).toBeNull();
    expect(again.headers.etag).toBe(held.headers.etag);
  });
});
