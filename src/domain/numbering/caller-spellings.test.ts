// One number, one answer, whatever the spelling: the trunk 0 after a French-plan calling code,
// E.164 without +, tel: and sip: URIs and withheld callers (docs/numbering.md). Every accepted
// spelling of a number parses to the very ParsedPhoneNumber of its national form, and two
// accepted spellings with one e164 never get two descriptions.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ParsePhoneNumberResult, ParsedPhoneNumber } from '../phone-number.js';
import { loadNumberingPlan } from '../../infra/arcep/load-numbering-plan.js';
import { memoizeParser } from './memoize-parser.js';
import { createPhoneNumberParser, MAX_URI_LENGTH, readCallerForm, WITHHELD_WORDS } from './parse-phone-number.js';

const plan = loadNumberingPlan('data/arcep');
const parse = createPhoneNumberParser(plan, 'FR');

function parsedOf(input: string): ParsedPhoneNumber {
  const result = parse(input);
  if (!result.ok) throw new Error(`${input} is refused: ${result.reason}`);
  return result.value;
}

const refusal = (reason: string): ParsePhoneNumberResult => ({ ok: false, reason });

/** The calling code of a French-plan number and its digits after it, read from its e164. */
function splitE164(parsed: ParsedPhoneNumber): { code: string; significant: string } {
  const digits = parsed.e164.slice(1);
  const code = ['33', '262', '508', '590', '594', '596'].find((candidate) => digits.startsWith(candidate));
  if (code === undefined) throw new Error(`${parsed.e164} is not of the French plan`);
  return { code, significant: digits.slice(code.length) };
}

describe('a trunk 0 after a French-plan calling code (issue 20)', () => {
  it.each([
    ['+330612000777', '0612000777'],
    ['+33 0612000777', '0612000777'],
    ['+33 06 12 00 07 77', '0612000777'],
    ['0033 0612000777', '0612000777'],
    ['00330612000777', '0612000777'],
    ['+33 (0)6 12 00 07 77', '0612000777'],
    ['+330162005678', '0162005678'],
    ['0033 0 1 62 00 56 78', '0162005678'],
    ['+2620692123456', '0692123456'],
    ['+262 0269 61 00 00', '0269610000'],
    ['+590 0690 12 34 56', '0690123456'],
    ['+594 0694 12 34 56', '0694123456'],
    ['+596 0696 12 34 56', '0696123456'],
    ['+508 0 41 12 34', '0508411234'],
    ['+508 0508 41 12 34', '0508411234'],
  ])('reads %s as the national number %s', (spelling, national) => {
    expect(parse(spelling)).toEqual({ ok: true, value: parsedOf(national) });
    expect(parsedOf(spelling).isFrenchPlan).toBe(true);
  });

  it('keeps the NPV facts of an NPV number spelled +33 0…', () => {
    expect(parsedOf('+330162005678').phoneInfo).toMatchObject({
      isNPV: true,
      rangeLabel: 'NPV : plage réservée aux appels et messages automatisés',
    });
  });

  it.each([
    ['+33 00612000777', 'invalid_number'],
    ['+33 061200077', 'invalid_number'],
  ])('refuses %s, which still is no number, with %s', (spelling, reason) => {
    expect(parse(spelling)).toMatchObject(refusal(reason));
  });

  // Issue 44: what an operator's block prefix matches a malformed caller by.
  it.each([
    ['+33 061200077', ['3361200077']],
    ['016200123', ['3316200123']],
    ['0692 12 34 5', ['262692123 45'.replace(' ', '')]],
    ['+33 692 12 34 5', ['262692123 45'.replace(' ', '')]],
    ['00225 01 02 03 04 05 06', ['225010203040506']],
    ['2250102030405060', ['2250102030405060']],
    ['22501020304', ['22501020304']],
    ['+44 (0)20 12', ['442012']],
    ['06', ['336', '2626', '5906', '5946', '5966']],
  ])('reads the refused %s as dialled in international form: %j', (spelling, dialledAs) => {
    const parsed = parse(spelling);
    expect(parsed).toMatchObject({ ok: false, reason: 'invalid_number' });
    expect(!parsed.ok && [...(parsed.dialledAs ?? [])].sort()).toEqual([...dialledAs].sort());
  });

  it('gives no reading of what is no number of any plan, nor of a refused spelling', () => {
    for (const spelling of ['+3300612', 'abc', '06..12']) {
      const parsed = parse(spelling);
      expect(!parsed.ok && parsed.dialledAs, spelling).toBe(undefined);
    }
  });

  // Issue 28: the French plan is one plan, so a national number under another territory's
  // calling code is that national number (its territory, NPV flag and e164), never refused nor
  // described as a foreign-looking number without its NPV flag.
  it.each([
    ['+33 0262 12 34 56', '0262123456'],
    ['+33262123456', '0262123456'],
    ['+262 06 12 34 56 78', '0612345678'],
    ['+590 0262 12 34 56', '0262123456'],
    ['33262123456', '0262123456'],
    ['+33947538433', '0947538433'],
    ['+330947538433', '0947538433'],
    ['330947538433', '0947538433'],
    ['sip:%2B33947538433@pbx', '0947538433'],
    ['+33 263 12 34 56', '0263123456'],
    ['+33 269 61 00 00', '0269610000'],
    ['+33 596 01 23 45', '0596012345'],
    ['+33 947 83 84 33', '0947838433'],
    ['+262 162 00 56 78', '0162005678'],
    ['+508 947 53 84 33', '0947538433'],
  ])('reads %s, a national number under another territory’s calling code, as %s', (spelling, national) => {
    expect(parse(spelling)).toEqual({ ok: true, value: parsedOf(national) });
  });

  it('keeps the NPV flag of the overseas NPV ranges (09475–09479) spelled with +33', () => {
    for (const prefix of ['09475', '09476', '09477', '09478', '09479']) {
      const national = `${prefix}38433`;
      expect(parsedOf(national).phoneInfo.isNPV).toBe(true);
      for (const spelling of [
        `+33${national.slice(1)}`,
        `+33${national}`,
        `33${national}`,
        `sip:%2B33${national.slice(1)}@pbx`,
      ]) {
        expect(parse(spelling), spelling).toEqual({ ok: true, value: parsedOf(national) });
      }
    }
  });

  it('leaves the other French calling codes (+269, +681, +687, +689) to their own plans', () => {
    // Their own numbering plans, with no trunk 0: libphonenumber reads them as any other country.
    expect(parsedOf('+687 75 12 34')).toMatchObject({ number: '+687751234', isFrenchPlan: false, regionCode: 'NC' });
    expect(parsedOf('+689 87 12 34 56')).toMatchObject({ isFrenchPlan: false, regionCode: 'PF' });
    expect(parse('+687 075 12 34').ok).toBe(false);
  });

  it('describes a foreign number from its e164, whatever trunk 0 libphonenumber dropped', () => {
    expect(parse('+44 020 7946 0958')).toEqual({ ok: true, value: parsedOf('+442079460958') });
    expect(parse('+44 (0)20 7946 0958')).toEqual({ ok: true, value: parsedOf('+442079460958') });
    expect(parse('+508 0800 12 34 56')).toEqual({ ok: true, value: parsedOf('+508800123456') });
    // Italian numbers keep their 0: it is part of the number, not a trunk prefix.
    expect(parsedOf('+39 06 1234 5678').e164).toBe('+390612345678');
  });
});

describe('caller numbers as phone systems send them (issue 21)', () => {
  const mobile = parsedOf('0612345678');

  it.each([
    '33612345678',
    '330612345678',
    '0033612345678',
    'tel:+33612345678',
    'tel:+33-6-12-34-56-78;npdi',
    'tel:+33.6.12.34.56.78',
    'tel:+33(6)12345678',
    'tel:+33612345678;npdi;rn=+33612340000',
    'tel:+33612345678;rn=+33-6-12-34-00-00;npdi',
    'tel:0612345678;phone-context=+33',
    'tel:06-12-34-56-78;phone-context=example.com',
    'TEL:+33612345678',
    'Tel:33612345678',
    'tel:+33612345678;ext=12',
    // The number part follows the spelling rules of a plain number besides the RFC's separators.
    'tel:+33 6 12 34 56 78',
    'sip:+33612345678@host;user=phone',
    'sip:+33612345678@pbx.example.com;user=phone',
    'sip:33612345678@10.0.0.1:5060;user=phone;transport=udp',
    'sip:0612345678@[2001:db8::1]:5061',
    'sips:0612345678@pbx.example;user=phone',
    'SIP:+33612345678@HOST.EXAMPLE',
    'Sips:+33612345678@host',
    'sip:+33612345678;npdi;rn=+33612340000@host;user=phone',
    'sip:+33-6-12-34-56-78@host',
    'sip:%2B33612345678@host',
    'sip:+33612345678@host?subject=call',
    'sip:+33612345678@trunk.example.',
  ])('reads %s as 0612345678', (spelling) => {
    expect(parse(spelling)).toEqual({ ok: true, value: mobile });
  });

  it('reads E.164 without + for overseas and foreign numbers, only when no national number fits', () => {
    expect(parse('262692123456')).toEqual({ ok: true, value: parsedOf('0692123456') });
    expect(parse('590690123456')).toEqual({ ok: true, value: parsedOf('0690123456') });
    expect(parse('32470123456')).toEqual({ ok: true, value: parsedOf('+32470123456') });
    expect(parse('14155552671')).toEqual({ ok: true, value: parsedOf('+14155552671') });
    expect(parse('442079460958')).toEqual({ ok: true, value: parsedOf('+442079460958') });
    // Too short to be read so: a national number missing its 0 stays refused.
    expect(parse('612345678')).toMatchObject(refusal('invalid_number'));
    expect(parse('508411234')).toMatchObject(refusal('invalid_number'));
    // A valid national number is never read as E.164, and 16 digits are no E.164 number.
    expect(parse('0612345678')).toEqual({ ok: true, value: mobile });
    expect(parse('3361234567812345')).toMatchObject(refusal('invalid_number'));
    expect(parse('99912345678')).toMatchObject(refusal('invalid_number'));
  });

  it('reads E.164 without + in a region whose national numbers are longer', () => {
    const american = createPhoneNumberParser(plan, 'US');
    // 1 415… is a valid national spelling in the US: it stays American.
    expect(american('14155552671')).toMatchObject({ ok: true, value: { number: '+14155552671' } });
    expect(american('33612345678')).toEqual({ ok: true, value: mobile });
  });

  it('reads the user part of a sip: URI up to 256 characters in all, and refuses a longer one as too_long', () => {
    const host = (length: number) => `${'a'.repeat(length - 4)}.com`;
    const uri = (total: number) => {
      const start = 'sip:+33612345678@';
      return `${start}${host(total - start.length)}`;
    };
    expect(uri(MAX_URI_LENGTH)).toHaveLength(256);
    expect(parse(uri(MAX_URI_LENGTH))).toEqual({ ok: true, value: mobile });
    expect(parse(uri(MAX_URI_LENGTH + 1))).toMatchObject(refusal('too_long'));
    // The 32-character bound is the number's, inside the URI as outside.
    expect(parse(`sip:+33612345678${';npdi'.repeat(40)}@h`)).toEqual({ ok: true, value: mobile });
    expect(parse(`tel:+${'3'.repeat(32)}`)).toMatchObject(refusal('too_long'));
    expect(parse(`tel:+33-6-12-34-56-78${';x'.repeat(100)}`)).toEqual({ ok: true, value: mobile });
    expect(parse(`+${'3'.repeat(40)}`)).toMatchObject(refusal('too_long'));
  });

  it.each([
    ['sip:example.com', 'invalid_uri'],
    ['sip:@example.com', 'invalid_uri'],
    ['sip:+33612345678@', 'invalid_uri'],
    ['sip:+33612345678@bad host', 'invalid_uri'],
    ['sip:+33612345678@host@other', 'invalid_uri'],
    ['sip:+33612345678@-host', 'invalid_uri'],
    ['sip:+33612345678:secret@host', 'invalid_uri'],
    ['sip:%2G33612345678@host', 'invalid_uri'],
    ['sip:+33612345678@host;=x', 'invalid_uri'],
    ['sip:+33612345678@host;user=', 'invalid_uri'],
    ['sip:+33612345678@host?a b', 'invalid_uri'],
    ['tel:+33612345678;', 'invalid_uri'],
    ['tel:+33612345678;a b', 'invalid_uri'],
    ['tel:+33612345678;rn=1;;npdi', 'invalid_uri'],
    ['sip:alice@example.com', 'invalid_character'],
    ['tel:+33612345678#', 'invalid_character'],
    ['tel:*31#0612345678', 'invalid_character'],
    ['tel:++33612345678', 'invalid_character'],
    ['tel:', 'no_digits'],
    ['tel:;npdi', 'no_digits'],
    ['tel:-.-', 'no_digits'],
    ['sip:+@host', 'no_digits'],
    ['tel:+33612', 'invalid_number'],
    ['sip:0612345678901@host', 'invalid_number'],
    ['tel:+33612345678\n', 'invalid_character'],
    ['sip:+33612345678@host\u0000', 'invalid_uri'],
    ['tel:٠٦١٢٣٤٥٦٧٨', 'invalid_character'],
    ['callto:+33612345678', 'invalid_character'],
    ['telephone:+33612345678', 'invalid_character'],
  ])('refuses %j with %s', (spelling, reason) => {
    expect(parse(spelling)).toMatchObject(refusal(reason));
  });

  it('refuses every withheld word, in any case, bare or as a tel: number or sip: user part, with `withheld`', () => {
    expect([...WITHHELD_WORDS].sort()).toEqual([
      'anonymous',
      'private',
      'restricted',
      'unavailable',
      'unknown',
      'withheld',
    ]);
    for (const word of WITHHELD_WORDS) {
      const spellings = [word, word.toUpperCase(), `${word.charAt(0).toUpperCase()}${word.slice(1)}`];
      for (const spelled of spellings) {
        for (const form of [
          spelled,
          `tel:${spelled}`,
          `sip:${spelled}@anonymous.invalid`,
          `SIPS:${spelled}@pbx.example;user=phone`,
          `sip:${spelled};x=1@host`,
        ]) {
          expect(parse(form), form).toMatchObject(refusal('withheld'));
        }
      }
    }
    expect(parse('sip:anonymous@anonymous.invalid')).toMatchObject(refusal('withheld'));
    // Nothing but the word: more text is no withheld caller, and no number either.
    expect(parse('anonymous1')).toMatchObject(refusal('invalid_character'));
    expect(parse(' anonymous')).toMatchObject(refusal('invalid_character'));
    expect(parse('anonyme')).toMatchObject(refusal('invalid_character'));
  });

  it('tells a word, a URI and a plain spelling apart before any number rule', () => {
    expect(readCallerForm('0612345678')).toEqual({ ok: true, text: '0612345678' });
    expect(readCallerForm('tel:+33-6-12;npdi')).toEqual({ ok: true, text: '+33612' });
    expect(readCallerForm('sip:+33.6.12@h')).toEqual({ ok: true, text: '+33612' });
    expect(readCallerForm('Restricted')).toMatchObject(refusal('withheld'));
    expect(readCallerForm('x'.repeat(MAX_URI_LENGTH + 1))).toMatchObject(refusal('too_long'));
  });
});

// ---- Properties

/** A valid national number of the French plan, mainland or overseas. */
const frenchNational: fc.Arbitrary<ParsedPhoneNumber> = fc
  .oneof(
    fc.tuple(
      fc.constantFrom('01', '02', '03', '04', '05', '06', '07', '09', '080', '0162', '0948'),
      fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 8, maxLength: 8 }),
    ),
    fc.tuple(
      fc.constantFrom(
        '0262',
        '0263',
        '0692',
        '0693',
        '0269',
        '0639',
        '0590',
        '0690',
        '0594',
        '0694',
        '0596',
        '0696',
        '0508',
        '09475',
        '09478',
      ),
      fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 6, maxLength: 6 }),
    ),
  )
  .map(([start, rest]) => `${start}${rest}`.slice(0, 10))
  .map((digits) => parse(digits))
  .filter((result): result is { ok: true; value: ParsedPhoneNumber } => result.ok && result.value.isFrenchPlan)
  .map((result) => result.value);

const separator = fc.constantFrom('', ' ', '.', '-');
const visual = fc.constantFrom('', '-', '.');
const host = fc.constantFrom(
  'host',
  'pbx.example',
  'trunk.example.com:5060',
  '10.0.0.1',
  '[2001:db8::1]',
  `${'long-label.'.repeat(12)}example`,
);
const uriParameters = fc
  .array(
    fc.constantFrom(';npdi', ';rn=+33612340000', ';phone-context=+33', ';user=phone', ';transport=udp', ';isub=12'),
    { maxLength: 3 },
  )
  .map((list) => list.join(''));
const caseOf = fc.constantFrom(
  (text: string) => text,
  (text: string) => text.toUpperCase(),
  (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`,
);

/** The digits in pairs from the right (`06 12 34 56 78`, `6 12 34 56 78`, `41 12 34`). */
function grouped(digits: string, sep: string): string {
  const groups: string[] = [];
  for (let end = digits.length; end > 0; end -= 2) groups.unshift(digits.slice(Math.max(0, end - 2), end));
  return groups.join(sep);
}

/** Every spelling of one number this service accepts, people's and phone systems'. */
function spellingOf(parsed: ParsedPhoneNumber): fc.Arbitrary<string> {
  const { code, significant } = splitE164(parsed);
  const national = parsed.number;
  const plain = [
    separator.map((sep) => grouped(national, sep)),
    separator.map((sep) => `+${code}${sep}${grouped(significant, sep)}`),
    separator.map((sep) => `00${code}${sep}${grouped(significant, sep)}`),
    // The attack of issue 20: calling code, then the national number with its trunk 0.
    separator.map((sep) => `+${code}${sep}${grouped(national, sep)}`),
    separator.map((sep) => `00${code}${sep}${grouped(national, sep)}`),
    separator.map((sep) => `+${code}${sep}(0)${grouped(significant, sep)}`),
  ];
  const e164Digits = `${code}${significant}`;
  // E.164 without +, for the numbers long enough to be read so (all but +508's six-digit ones).
  if (e164Digits.length >= 11) plain.push(fc.constant(e164Digits), fc.constant(`${code}0${significant}`));
  const number = fc.oneof(
    fc.constant(`+${code}${significant}`),
    fc.constant(national),
    visual.map((sep) => `+${code}${sep}${grouped(significant, sep)}`),
    visual.map((sep) => grouped(national, sep)),
  );
  const uris = [
    fc
      .tuple(caseOf, number, uriParameters)
      .map(([spell, subscriber, parameters]) => `${spell('tel')}:${subscriber}${parameters}`),
    fc
      .tuple(caseOf, fc.constantFrom('sip', 'sips'), number, uriParameters, host, uriParameters)
      .map(
        ([spell, scheme, user, userParameters, hostName, parameters]) =>
          `${spell(scheme)}:${user}${userParameters}@${hostName}${parameters}`,
      ),
  ];
  // Longer ones are refused as too_long, which the examples above show.
  return fc.oneof(...plain, ...uris).filter((spelling) => spelling.length <= MAX_URI_LENGTH);
}

describe('one number, one answer: properties', () => {
  it('parses every accepted spelling of a valid French-plan number to the ParsedPhoneNumber of its national form', () => {
    fc.assert(
      fc.property(
        frenchNational.chain((parsed) => fc.tuple(fc.constant(parsed), spellingOf(parsed))),
        ([expected, spelling]) => {
          expect(parse(spelling), spelling).toEqual({ ok: true, value: expected });
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('gives two accepted spellings with one e164 the same ParsedPhoneNumber', () => {
    // Digit strings near numbers of every kind, with every prefix a spelling can have: whatever
    // is accepted is grouped by e164, and each group must hold one description.
    const digits = (min: number, max: number) =>
      fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
    const prefix = fc.constantFrom('', '0', '00', '+', '+0', '00', 'tel:', 'tel:+', 'sip:', 'sip:+');
    const code = fc.constantFrom(
      '',
      '33',
      '330',
      '262',
      '2620',
      '508',
      '5080',
      '590',
      '594',
      '596',
      '32',
      '44',
      '440',
      '1',
      '39',
      '687',
      '41',
    );
    // One run of digits spelled many ways, so that accepted spellings meet on one e164 often.
    const lead = fc.constantFrom('', '0', '6', '7', '1', '9', '8', '80', '26', '69', '50');
    const spellings = fc
      .tuple(
        lead,
        fc.oneof({ weight: 4, arbitrary: digits(8, 8) }, { weight: 1, arbitrary: digits(4, 10) }),
        fc.array(fc.tuple(prefix, code, fc.boolean()), { minLength: 20, maxLength: 60 }),
      )
      .map(([first, rest, forms]) =>
        forms.map(([start, callingCode, withParameters]) => {
          const text = `${start}${callingCode}${first}${rest}`;
          if (!start.startsWith('sip')) return withParameters ? `${text};npdi` : text;
          return withParameters ? `${text}@h;user=phone` : `${text}@host`;
        }),
      );
    let meetings = 0;
    fc.assert(
      fc.property(spellings, (inputs) => {
        const byE164 = new Map<string, { input: string; value: ParsedPhoneNumber }>();
        for (const input of inputs) {
          const result = parse(input);
          if (!result.ok) continue;
          const first = byE164.get(result.value.e164);
          if (first === undefined) byE164.set(result.value.e164, { input, value: result.value });
          else {
            if (first.input !== input) meetings += 1;
            expect(result.value, `${first.input} and ${input}`).toEqual(first.value);
          }
          // The normalised number and the e164 read back to the same answer.
          expect(parse(result.value.number), input).toEqual(result);
          expect(parse(result.value.e164), input).toEqual(result);
        }
      }),
      { numRuns: 400 },
    );
    // The property was put to the test: distinct spellings did meet on one e164.
    expect(meetings).toBeGreaterThan(100);
  });

  it('never lets the memo in front of the parser give one spelling the answer of another', () => {
    const memoized = memoizeParser(parse, 64);
    const inputs = fc.oneof(
      frenchNational.chain(spellingOf),
      fc.constantFrom('anonymous', 'sip:anonymous@anonymous.invalid', '+33262123456', '0612345678', '+32470123456'),
    );
    fc.assert(
      fc.property(fc.array(inputs, { minLength: 1, maxLength: 200 }), (list) => {
        for (const input of [...list, ...list.reverse()]) expect(memoized(input), input).toEqual(parse(input));
      }),
      { numRuns: 50 },
    );
  });
});
