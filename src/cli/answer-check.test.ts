import { describe, expect, it } from 'vitest';
import { phoneRouteSchemas } from '../http/schemas/phone.js';
import { checkReportAnswer } from './answer-check.js';

type Published = Record<string, { content?: Record<string, { example?: unknown }> }>;

describe('checkReportAnswer: the published schema, applied by the CLI', () => {
  it('accepts every example the OpenAPI document publishes for the report route', () => {
    const published = phoneRouteSchemas.fullReport.response as unknown as Published;
    let checked = 0;
    for (const [status, answer] of Object.entries(published)) {
      for (const media of Object.values(answer.content ?? {})) {
        if (media.example === undefined) continue;
        expect(checkReportAnswer(Number(status), JSON.stringify(media.example)), `${status}`).toMatchObject({
          ok: true,
        });
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(4);
  });

  it('refuses a closed vocabulary value outside it, a missing member, an unknown member and a wrong type, naming the field', () => {
    const published = phoneRouteSchemas.fullReport.response as unknown as Published;
    const example = (): {
      data: { phoneInfo: Record<string, unknown> };
      meta: { sources: { signals: Record<string, unknown> } };
    } => JSON.parse(JSON.stringify(published['200']?.content?.['application/json']?.example)) as never;
    const reason = example();
    reason.meta.sources.signals.reason = 'made_up';
    expect(checkReportAnswer(200, JSON.stringify(reason))).toEqual({
      ok: false,
      // meta.sources.<slot> is a union of its answered, skipped and pending shapes: the slot is named.
      problem:
        "the server's HTTP 200 answer does not match the schema the API publishes (/meta/sources/signals: Expected union value)",
    });
    const arrayReason = example();
    arrayReason.meta.sources.signals.reason = ['timeout'];
    expect(checkReportAnswer(200, JSON.stringify(arrayReason))).toMatchObject({
      ok: false,
      problem: expect.stringContaining('/meta/sources/signals'),
    });
    const missing = example();
    delete missing.data.phoneInfo.region;
    expect(checkReportAnswer(200, JSON.stringify(missing))).toMatchObject({
      ok: false,
      problem: expect.stringContaining('/data/phoneInfo/region'),
    });
    const extra = example();
    extra.data.phoneInfo['\u001b[2Jx'] = 'y';
    const refused = checkReportAnswer(200, JSON.stringify(extra));
    expect(refused).toMatchObject({ ok: false, problem: expect.stringContaining('/data/phoneInfo/[2Jx') });
    const wrongType = example();
    wrongType.data.phoneInfo.isNPV = 'true';
    expect(checkReportAnswer(200, JSON.stringify(wrongType))).toMatchObject({
      ok: false,
      problem: expect.stringContaining('/data/phoneInfo/isNPV'),
    });
    expect(checkReportAnswer(418, '{}')).toEqual({
      ok: false,
      problem: 'the server answered HTTP 418, which the API does not publish for a report',
    });
    expect(checkReportAnswer(304, '')).toMatchObject({ ok: false });
  });
});
