import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRuleIndex, type RuleIndex } from '../lists/rule-index.js';
import type { ListRule } from '../ports/operator-lists.js';
import {
  buildFeedEntries,
  CARD_MAX_NUMBERS,
  cardSteps,
  feedEntrySteps,
  groupIntoCards,
  rankRecent,
  sortInSteps,
  splitAround,
  telOf,
  type BlockedCaller,
  type FeedEntry,
  type FeedInputs,
  type ReportedCaller,
} from './feed-content.js';
import { runToEnd } from '../steps.js';
import { renderCsv, renderVcard, spamBlockerPattern } from './feed-formats.js';

const WORDING = { rule: 'Bloqué', npv: 'NPV' };
const rule = (text: string, list: 'allow' | 'block', label?: string): ListRule => ({
  rule: text,
  list,
  createdAt: '2026-01-01T00:00:00.000Z',
  ...(label === undefined ? {} : { label }),
});
const inputs = (partial: Partial<FeedInputs>): FeedInputs => ({
  rules: [],
  npvPrefixes: [],
  recent: [],
  maxEntries: 1000,
  wording: WORDING,
  ...partial,
});
const tels = (entries: readonly FeedEntry[]): string[] => entries.map(telOf);
const DAY = 86_400_000;
const caller = (e164: string, score: number, atMs: number): BlockedCaller => ({
  e164,
  score,
  reason: `SPAM? ${score}/9`,
  atMs,
});

const reportedCaller = (e164: string, reporters: number, lastReportAtMs: number): ReportedCaller => ({
  e164,
  reporters,
  spamWeight: reporters,
  lastReportAtMs,
  reason: `SIGNALÉ ${reporters}× Arnaque`,
});

/** Whether any entry would block `e164` on a Fritz!Box (exact, or a wildcard's prefix). */
const blocks = (entries: readonly FeedEntry[], e164: string): boolean =>
  entries.some((entry) => (entry.wildcard ? e164.slice(1).startsWith(entry.digits) : e164.slice(1) === entry.digits));

describe('blocklist feed content', () => {
  it('lists the call-centre blocks as ranges after NPV, split around allowed numbers and counted in the cap', () => {
    const entries = buildFeedEntries(
      inputs({
        rules: [rule('+33189712345', 'allow'), rule('+331898*', 'allow')],
        npvPrefixes: ['+33162'],
        // One under an NPV prefix is the NPV range's; one allowed whole is left out.
        callCentrePrefixes: ['+3318971', '+331620', '+331898'],
        wording: { ...WORDING, callCentre: 'Plateforme' },
      }),
    );
    const centre = entries.filter((entry) => entry.source === 'call_centre');
    expect(entries[0]?.source).toBe('npv');
    expect(centre.every((entry) => entry.wildcard && entry.reason === 'Plateforme')).toBe(true);
    expect(blocks(entries, '+33189712345')).toBe(false);
    expect(blocks(entries, '+33189712346')).toBe(true);
    expect(blocks(entries, '+33189799999')).toBe(false);
    expect(blocks(entries, '+33189800000')).toBe(false);
    expect(tels(entries).filter((tel) => tel.startsWith('+331620'))).toEqual([]);
    // Split around one number: a range per digit at each level below the prefix.
    expect(centre.length).toBe(9 * 4);

    const capped = buildFeedEntries(
      inputs({ callCentrePrefixes: ['+3318971', '+3318972', '+3318973'], maxEntries: 2, wording: WORDING }),
    );
    expect(tels(capped)).toEqual(['+3318971*', '+3318972*']);
  });

  it('never lists more than the cap, and never an allowed number, whatever the call-centre ranges (property)', () => {
    const digits = fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 1, maxLength: 3 });
    fc.assert(
      fc.property(
        fc.uniqueArray(
          digits.map((d) => `+33189${d}`),
          { maxLength: 6 },
        ),
        fc.uniqueArray(
          fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 6, maxLength: 6 }).map((d) => `+33189${d}`),
          { maxLength: 4 },
        ),
        fc.integer({ min: 1, max: 200 }),
        (prefixes, allowed, maxEntries) => {
          const entries = buildFeedEntries(
            inputs({ rules: allowed.map((e164) => rule(e164, 'allow')), callCentrePrefixes: prefixes, maxEntries }),
          );
          expect(entries.length).toBeLessThanOrEqual(maxEntries);
          for (const e164 of allowed) expect(blocks(entries, e164)).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('lists the operator block rules first (wildcards for prefixes), then NPV ranges, then looked-up numbers', () => {
    const entries = buildFeedEntries(
      inputs({
        rules: [rule('+33612345678', 'block', 'Arnaque'), rule('+33170*', 'block')],
        npvPrefixes: ['+33162'],
        recent: [caller('+33698765432', 8, 1000)],
      }),
    );
    expect(tels(entries)).toEqual(['+33170*', '+33612345678', '+33162*', '+33698765432']);
    expect(entries.map((entry) => entry.source)).toEqual(['rule', 'rule', 'npv', 'recent']);
    expect(entries.map((entry) => entry.reason)).toEqual(['Bloqué', 'Arnaque', 'NPV', 'SPAM? 8/9']);
  });

  it('ranks the numbers reported as spam after the operator’s rules and the NPV ranges, before the looked-up ones', () => {
    const entries = buildFeedEntries(
      inputs({
        rules: [rule('+33170*', 'block'), rule('+33612000001', 'allow')],
        npvPrefixes: ['+33162'],
        reported: [
          reportedCaller('+33612000002', 2, 5000),
          reportedCaller('+33612000003', 4, 1000),
          { ...reportedCaller('+33612000004', 2, 9000), spamWeight: 1.5 },
          reportedCaller('+33612000001', 9, 9000),
          // Also recorded as looked up: listed once, as reported.
          reportedCaller('+33698765432', 2, 0),
        ],
        recent: [caller('+33698765432', 8, 1000), caller('+33698765433', 9, 2000)],
        maxEntries: 100,
      }),
    );
    // Most reporters first, then the heaviest spam weight; the allowed number is left out.
    expect(tels(entries)).toEqual([
      '+33170*',
      '+33162*',
      '+33612000003',
      '+33612000002',
      '+33698765432',
      '+33612000004',
      '+33698765433',
    ]);
    expect(entries.map((entry) => entry.source)).toEqual([
      'rule',
      'npv',
      'reported',
      'reported',
      'reported',
      'reported',
      'recent',
    ]);
    expect(entries[2]?.reason).toBe('SIGNALÉ 4× Arnaque');
  });

  it('never covers an allowed number inside a blocked prefix: the wildcard is split around it', () => {
    const entries = buildFeedEntries(inputs({ rules: [rule('+33162*', 'block'), rule('+331620012*', 'allow')] }));
    expect(blocks(entries, '+33162001234')).toBe(false);
    expect(blocks(entries, '+33162001299')).toBe(false);
    // Everything else of the range is still covered.
    for (const other of ['+33162001134', '+33162011234', '+33162901234', '+33162001304'])
      expect(blocks(entries, other), other).toBe(true);
    expect(entries.every((entry) => entry.wildcard)).toBe(true);
    expect(tels(entries)).toContain('+331620011*');
    expect(tels(entries)).not.toContain('+331620012*');
  });

  it('splits an NPV range around an allowed exact number, and drops a range the allow list decides for', () => {
    const entries = buildFeedEntries(
      inputs({ rules: [rule('+33162001234', 'allow'), rule('+33163*', 'allow')], npvPrefixes: ['+33162', '+33163'] }),
    );
    expect(blocks(entries, '+33162001234')).toBe(false);
    expect(blocks(entries, '+33162001235')).toBe(true);
    expect(blocks(entries, '+33163000000')).toBe(false);
  });

  it('keeps a block rule longer than the allow rule around it (the longest rule decides), and drops an exact block an equal allow overrides', () => {
    const entries = buildFeedEntries(
      inputs({
        rules: [
          rule('+33612*', 'allow'),
          rule('+33612345678', 'block'),
          rule('+33699999999', 'block'),
          rule('+33699999999', 'allow'),
        ],
      }),
    );
    expect(tels(entries)).toEqual(['+33612345678']);
  });

  it('leaves out a looked-up number the allow list covers and one a wildcard already holds', () => {
    const entries = buildFeedEntries(
      inputs({
        rules: [rule('+33611*', 'allow'), rule('+33170*', 'block')],
        recent: [caller('+33611111111', 9, 5), caller('+33170000001', 9, 4), caller('+33622222222', 9, 3)],
      }),
    );
    expect(tels(entries)).toEqual(['+33170*', '+33622222222']);
  });

  it('ranks looked-up numbers by day, then score, then time, and honours the cap in rank order', () => {
    const recent = [
      caller('+33600000001', 7, 10 * DAY + 5),
      caller('+33600000002', 9, 10 * DAY + 1),
      caller('+33600000003', 9, 9 * DAY + 9),
      caller('+33600000004', 8, 10 * DAY + 2),
    ];
    expect(rankRecent(recent).map((entry) => entry.e164)).toEqual([
      '+33600000002',
      '+33600000004',
      '+33600000001',
      '+33600000003',
    ]);
    const capped = buildFeedEntries(inputs({ rules: [rule('+33170*', 'block')], recent, maxEntries: 3 }));
    expect(tels(capped)).toEqual(['+33170*', '+33600000002', '+33600000004']);
  });

  it('counts the ranges of a split wildcard against the cap', () => {
    const entries = buildFeedEntries(
      inputs({ rules: [rule('+33162*', 'block'), rule('+33162001234', 'allow')], maxEntries: 5 }),
    );
    expect(entries).toHaveLength(5);
  });
});

describe('blocklist cards', () => {
  const manyNumbers = (count: number, prefix = '+336'): FeedEntry[] =>
    Array.from({ length: count }, (_, index) => ({
      digits: `${prefix.slice(1)}${String(index).padStart(8, '0')}`,
      wildcard: false,
      source: 'recent' as const,
      reason: 'SPAM? 8/9',
    }));

  it('holds at most 9 numbers per card, each number once', () => {
    const entries = manyNumbers(250);
    const cards = groupIntoCards(entries, () => 'r');
    expect(Math.max(...cards.map((card) => card.entries.length))).toBeLessThanOrEqual(CARD_MAX_NUMBERS);
    expect(cards.flatMap((card) => card.entries.map(telOf)).sort()).toEqual(entries.map(telOf).sort());
  });

  it('keeps a card’s uid when a number is added in another prefix bucket', () => {
    const before = groupIntoCards([...manyNumbers(30, '+336'), ...manyNumbers(5, '+337')], () => 'r');
    const after = groupIntoCards([...manyNumbers(30, '+336'), ...manyNumbers(6, '+337')], () => 'r');
    const unchanged = (cards: typeof before) =>
      cards
        .filter((card) => card.entries[0]?.digits.startsWith('336'))
        .map((card) => [card.uid, tels(card.entries).join()]);
    expect(unchanged(after)).toEqual(unchanged(before));
  });

  it('writes vCard 3.0 with the reason as FN, CATEGORIES:SPAM and one TEL per number', () => {
    const [card] = groupIntoCards(manyNumbers(2), () => 'r');
    if (card === undefined) throw new Error('no card');
    const text = renderVcard({ ...card, reason: 'Arnaque, au; CPF' }, '-//test//FR');
    expect(text.split('\r\n')).toEqual([
      'BEGIN:VCARD',
      'VERSION:3.0',
      'PRODID:-//test//FR',
      `UID:${card.uid}`,
      'FN:Arnaque\\, au\\; CPF',
      'N:Arnaque\\, au\\; CPF;;;;',
      'CATEGORIES:SPAM',
      'TEL;TYPE=VOICE:+33600000000',
      'TEL;TYPE=VOICE:+33600000001',
      'END:VCARD',
      '',
    ]);
  });

  it('writes the CSV SpamBlocker imports: pattern without +, wildcard as .*, no comma in a description', () => {
    expect(spamBlockerPattern({ digits: '33162', wildcard: true, source: 'npv', reason: '' })).toBe('33162.*');
    const csv = renderCsv([
      {
        uid: 'u',
        reason: 'a, b',
        entries: [{ digits: '33612345678', wildcard: false, source: 'rule', reason: 'a, b' }],
      },
    ]);
    expect(csv).toBe('pattern,description,isBlacklist\n33612345678,a b,true\n');
  });

  it('builds entries and cards in many small steps with the same result as in one go', () => {
    const recent = Array.from({ length: 1200 }, (_, index) =>
      caller(`+336${String(20_000_000 + index * 7919).slice(-8)}`, 7 + (index % 3), index),
    );
    const feedInputs = inputs({
      rules: [rule('+33170*', 'block'), rule('+33170000001', 'allow')],
      npvPrefixes: ['+33162', '+33163'],
      recent,
    });
    const count = <T>(steps: Generator<void, T, void>): { value: T; pauses: number } => {
      let pauses = 0;
      for (;;) {
        const next = steps.next();
        if (next.done === true) return { value: next.value, pauses };
        pauses += 1;
      }
    };
    const entries = count(feedEntrySteps(feedInputs));
    expect(entries.value).toEqual(buildFeedEntries(feedInputs));
    expect(entries.pauses).toBeGreaterThan(100);
    const cards = count(cardSteps(entries.value, () => 'r'));
    expect(cards.value).toEqual(groupIntoCards(entries.value, () => 'r'));
    expect(cards.pauses).toBeGreaterThan(100);
  });

  it('splits to nothing when the allowed prefix is the range itself', () => {
    expect(splitAround('33162', [{ digits: '33162', wildcard: true, list: 'allow' }])).toEqual([]);
  });
});

describe('blocklist feed against the lists (issue 44)', () => {
  it('never lists a blocked range that covers an allowed number of its own digits (finding 3)', () => {
    const entries = buildFeedEntries(
      inputs({ rules: [rule('+33612345678*', 'block'), rule('+33612345678', 'allow')] }),
    );
    expect(blocks(entries, '+33612345678')).toBe(false);
    expect(tels(entries)).not.toContain('+33612345678*');
    expect(renderCsv(groupIntoCards(entries, () => 'r'))).not.toContain('33612345678.*');
    // A shorter blocked range around it is split around the number, which stays out.
    const around = buildFeedEntries(inputs({ rules: [rule('+3361234567*', 'block'), rule('+33612345678', 'allow')] }));
    expect(blocks(around, '+33612345678')).toBe(false);
    expect(blocks(around, '+33612345677')).toBe(true);
    expect(blocks(around, '+33612345679')).toBe(true);
  });

  it('builds a range around thousands of allowed numbers without a RangeError, within the cap (finding 4)', () => {
    const allowed = Array.from(
      { length: 4000 },
      (_, index) => `+336${String((index * 7_919_993 + 12_345) % 100_000_000).padStart(8, '0')}`,
    );
    const rules = [rule('+33*', 'block'), ...allowed.map((e164) => rule(e164, 'allow'))];
    const entries = buildFeedEntries(inputs({ rules, maxEntries: 1000 }));
    expect(entries).toHaveLength(1000);
    for (const e164 of allowed) expect(blocks(entries, e164), e164).toBe(false);
    // Uncapped, the whole split is made too (some 290,000 ranges), one at a time.
    const whole = buildFeedEntries(inputs({ rules, maxEntries: 1_000_000 }));
    expect(whole.length).toBeGreaterThan(100_000);
    for (const e164 of allowed.slice(0, 5)) expect(blocks(whole, e164), e164).toBe(false);
    expect(blocks(whole, '+33170000000')).toBe(true);
  });

  it('decides each entry with one look-up on the lists’ index, reading the rules in a few passes (finding 10)', () => {
    const index = createRuleIndex([
      rule('+33170*', 'block'),
      rule('+33170000001', 'allow'),
      rule('+33612345678', 'block'),
      rule('+33699*', 'allow'),
    ]);
    let decisions = 0;
    let read = 0;
    const counted = {
      decide: (...args: Parameters<RuleIndex['decide']>) => {
        decisions += 1;
        return index.decide(...args);
      },
      *inForce(now?: number) {
        for (const item of index.inForce(now)) {
          read += 1;
          yield item;
        }
      },
    };
    const entries = buildFeedEntries(
      inputs({ rules: counted, recent: [caller('+33699000001', 9, 1), caller('+33611111111', 9, 2)] }),
    );
    expect(blocks(entries, '+33170000001')).toBe(false);
    expect(tels(entries)).toContain('+33611111111');
    // Three passes over the rules: the block ranges, the allow rules inside them, the block numbers.
    expect(read).toBe(3 * 4);
    // Two block rules and two looked-up numbers: one decision each.
    expect(decisions).toBe(4);
  });

  it('reads the block rules in batches, in digit order, past a first batch that the ranges before them cover', () => {
    // 300 ranges inside +331*, all covered by it, then one number: found in a later batch.
    const covered = Array.from({ length: 300 }, (_, at) => rule(`+331${String(at).padStart(3, '0')}*`, 'block'));
    const entries = buildFeedEntries(
      inputs({
        rules: createRuleIndex([
          ...covered,
          rule('+331*', 'block'),
          rule('+33612345678', 'block'),
          rule('+339*', 'block'),
        ]),
        maxEntries: 3,
      }),
    );
    expect(tels(entries)).toEqual(['+331*', '+339*', '+33612345678']);
  });

  it('sorts in steps as the engine sorts, stably', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.nat()), { maxLength: 2000 }), (items) => {
        const compare = (a: [number, number], b: [number, number]): number => a[0] - b[0];
        expect(runToEnd(sortInSteps(items, compare))).toEqual([...items].sort(compare));
      }),
      { numRuns: 60 },
    );
  });

  // Rules and numbers over a small alphabet, so that they overlap often: every number of up to
  // 8 digits over 3 and 0-2 starting with 33 is probed.
  const probes: string[] = [];
  for (let length = 2; length <= 8; length += 1) {
    const grow = (digits: string): void => {
      if (digits.length === length) probes.push(digits);
      else for (const digit of '012') grow(`${digits}${digit}`);
    };
    grow('33');
  }
  const digitsArb = fc
    .array(fc.constantFrom('0', '1', '2'), { minLength: 1, maxLength: 5 })
    .map((tail) => `33${tail.join('')}`);
  const ruleArb = fc.record({
    digits: digitsArb,
    wildcard: fc.boolean(),
    list: fc.constantFrom<'allow' | 'block'>('allow', 'block'),
  });

  it('property: the feed never lists what the lists allow, and every number a listed block rule covers is blocked by the lists (finding 3)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(ruleArb, { selector: (item) => `${item.digits}${item.wildcard ? '*' : ''}`, maxLength: 25 }),
        fc.uniqueArray(digitsArb, { maxLength: 3 }),
        fc.uniqueArray(digitsArb, { maxLength: 6 }),
        (shapes, npv, recent) => {
          const rules = shapes.map((shape) => rule(`+${shape.digits}${shape.wildcard ? '*' : ''}`, shape.list));
          const index = createRuleIndex(rules);
          const entries = buildFeedEntries(
            inputs({
              rules,
              npvPrefixes: npv.map((digits) => `+${digits}`),
              recent: recent.map((digits, at) => caller(`+${digits}`, 9, at)),
              maxEntries: 100_000,
            }),
          );
          for (const probe of probes) {
            const decided = index.decide(probe, false, 0)?.list;
            const covering = entries.filter((entry) =>
              entry.wildcard ? probe.startsWith(entry.digits) : probe === entry.digits,
            );
            if (decided === 'allow') expect(covering, `+${probe} is allowed`).toEqual([]);
            for (const entry of covering.filter((item) => item.source === 'rule'))
              expect(decided, `+${probe} under ${telOf(entry)}`).toBe('block');
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('property: the feed never lists a number reported as spam that the lists allow, and lists every other one', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(ruleArb, { selector: (item) => `${item.digits}${item.wildcard ? '*' : ''}`, maxLength: 25 }),
        fc.uniqueArray(digitsArb, { maxLength: 8 }),
        fc.uniqueArray(digitsArb, { maxLength: 4 }),
        (shapes, reported, recent) => {
          const rules = shapes.map((shape) => rule(`+${shape.digits}${shape.wildcard ? '*' : ''}`, shape.list));
          const index = createRuleIndex(rules);
          const entries = buildFeedEntries(
            inputs({
              rules,
              reported: reported.map((digits, at) => reportedCaller(`+${digits}`, 2 + at, at)),
              recent: recent.map((digits, at) => caller(`+${digits}`, 9, at)),
              maxEntries: 100_000,
            }),
          );
          for (const probe of probes) {
            const covering = entries.filter((entry) =>
              entry.wildcard ? probe.startsWith(entry.digits) : probe === entry.digits,
            );
            if (index.decide(probe, false, 0)?.list === 'allow') expect(covering, `+${probe} is allowed`).toEqual([]);
          }
          for (const digits of reported) {
            if (digits.length < 4 || index.decide(digits, false, 0)?.list === 'allow') continue;
            expect(blocks(entries, `+${digits}`), `+${digits} is reported`).toBe(true);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('property: with expiries, built from the index as the service builds it, the feed lists nothing the lookup allows or leaves to the sources, and every whole number it blocks', () => {
    const NOW = Date.parse('2026-06-01T00:00:00Z');
    const expiryArb = fc.constantFrom(undefined, '2026-05-01T00:00:00.000Z', '2026-07-01T00:00:00.000Z');
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.record({
            digits: digitsArb,
            wildcard: fc.boolean(),
            list: fc.constantFrom<'allow' | 'block'>('allow', 'block'),
            expiresAt: expiryArb,
          }),
          {
            selector: (item) => `${item.digits}${item.wildcard ? '*' : ''}`,
            maxLength: 25,
          },
        ),
        (shapes) => {
          const rules = shapes.map((shape) => ({
            ...rule(`+${shape.digits}${shape.wildcard ? '*' : ''}`, shape.list),
            ...(shape.expiresAt === undefined ? {} : { expiresAt: shape.expiresAt }),
          }));
          const index = createRuleIndex(rules);
          const entries = buildFeedEntries(inputs({ rules: index, nowMs: NOW, maxEntries: 100_000 }));
          const listedTels = new Set(entries.map(telOf));
          const listed = (digits: string): boolean =>
            listedTels.has(`+${digits}`) || [...digits].some((_, at) => listedTels.has(`+${digits.slice(0, at + 1)}*`));
          // The feed's documented cut: an allowed number ends its branch, longer numbers under it
          // are not listed. And a split range lists its sub-ranges, not its own digits as a number:
          // completeness is asked of whole numbers, longer than every rule (8 digits here).
          const allowedNumbers = [...index.inForce(NOW)]
            .filter((item) => item.list === 'allow' && !item.rule.endsWith('*'))
            .map((item) => item.rule.slice(1));
          for (const probe of probes) {
            // What /verdict and /cid ask: the lists' match of the number (RuleIndex.match, which is decide).
            const decided = index.match(`+${probe}`, NOW)?.list;
            if (decided === 'allow') expect(listed(probe), `+${probe} is allowed`).toBe(false);
            const whole = probe.length === 8 && !allowedNumbers.some((digits) => probe.startsWith(digits));
            if (decided === 'block' && whole) expect(listed(probe), `+${probe} is blocked`).toBe(true);
            if (decided === undefined) expect(listed(probe), `+${probe} is decided by no rule`).toBe(false);
          }
        },
      ),
      { numRuns: 80 },
    );
  });
});
