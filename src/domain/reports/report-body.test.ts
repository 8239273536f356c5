// The report body as reporters really send it: JSON, SpamBlocker's JSON broken by its comment
// (aj3423/SpamBlocker service/bot/Actions1.kt fills `{comment}` into the body with a plain
// String.replace), a form, and everything else refused with the field it concerns.
import { describe, expect, it } from 'vitest';
import { RATING_SPELLINGS } from './ratings.js';
import { readReportBody, REPORT_BODY_MAX_BYTES } from './report-body.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('readReportBody', () => {
  it('reads a JSON body, with any of the accepted rating spellings, and cleans the comment', () => {
    expect(
      readReportBody(bytes('{"phone":"+33612345678","rating":"G_FRAUD","comment":"  faux\\tconseiller  "}')),
    ).toEqual({
      ok: true,
      value: { phone: '+33612345678', rating: 'fraud', comment: 'faux conseiller', commentDropped: false },
    });
    expect(readReportBody('{"phone":"0033612345678","rating":" Marketing "}')).toMatchObject({
      ok: true,
      value: { phone: '0033612345678', rating: 'advertising' },
    });
    expect(readReportBody('{"phone":"0612345678","rating":"valid","comment":""}')).toEqual({
      ok: true,
      value: { phone: '0612345678', rating: 'legitimate', commentDropped: false },
    });
  });

  it('reads SpamBlocker’s body made invalid by an unescaped comment: phone and rating kept, the comment dropped', () => {
    // The served template (src/http/routes/spamblocker-report.ts) with the comment pasted in as typed.
    const body =
      '{\n  "phone": "+33612345678",\n  "rating": "fraud",\n  "comment": "he said "madame"\nthen hung up"\n}';
    expect(() => JSON.parse(body) as unknown).toThrow();
    expect(readReportBody(bytes(body))).toEqual({
      ok: true,
      value: { phone: '+33612345678', rating: 'fraud', commentDropped: true },
    });
  });

  it('reads a real form body', () => {
    expect(readReportBody('phone=%2B33612345678&rating=survey&comment=sondage%0Aauto')).toEqual({
      ok: true,
      value: { phone: '+33612345678', rating: 'poll', comment: 'sondage auto', commentDropped: false },
    });
  });

  it('refuses what names no phone, no rating or an unknown rating, naming the field', () => {
    expect(readReportBody('{"rating":"fraud"}')).toMatchObject({ ok: false, field: 'phone' });
    expect(readReportBody('{"phone":"","rating":"fraud"}')).toMatchObject({ ok: false, field: 'phone' });
    expect(readReportBody('{"phone":33612345678,"rating":"fraud"}')).toMatchObject({ ok: false, field: 'phone' });
    expect(readReportBody('{"phone":"+33612345678"}')).toMatchObject({ ok: false, field: 'rating' });
    const unknown = readReportBody('{"phone":"+33612345678","rating":"scam"}');
    expect(unknown).toMatchObject({ ok: false, field: 'rating' });
    // The refusal lists every accepted value.
    for (const spelling of RATING_SPELLINGS) expect(unknown.ok ? '' : unknown.reason, spelling).toContain(spelling);
    expect(readReportBody('{"phone":"+33612345678","rating":"fraud","comment":42}')).toMatchObject({
      ok: false,
      field: 'comment',
    });
    // Broken JSON that still shows a phone but no rating.
    expect(readReportBody('{"phone": "+33612345678", "comment": "a "b""}')).toMatchObject({
      ok: false,
      field: 'rating',
    });
  });

  it('refuses a body that is not readable at all, naming the body', () => {
    for (const body of ['', '   ', 'hello', '[1,2]', '{"broken": ', 'null', '"phone"']) {
      expect(readReportBody(body), JSON.stringify(body)).toMatchObject({ ok: false, field: 'body' });
    }
    expect(readReportBody(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]))).toMatchObject({ ok: false, field: 'body' });
  });

  it('refuses a body over its cap, and reads one at it', () => {
    const body = (length: number): string => {
      const head = '{"phone":"+33612345678","rating":"fraud","comment":"';
      return `${head}${'a'.repeat(length - head.length - 2)}"}`;
    };
    expect(readReportBody(body(REPORT_BODY_MAX_BYTES))).toMatchObject({ ok: true });
    expect(readReportBody(body(REPORT_BODY_MAX_BYTES + 1))).toMatchObject({ ok: false, field: 'body', tooLarge: true });
  });
});
