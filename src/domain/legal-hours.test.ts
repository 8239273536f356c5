import { describe, expect, it } from 'vitest';
import { easterSunday, isFrenchPublicHoliday, nextLegalHoursBoundary, outsideLegalHours } from './legal-hours.js';

const PARIS = 'Europe/Paris';
const at = (iso: string) => new Date(iso);

describe('outsideLegalHours on a Monday in Paris (30 November 2026, UTC+1)', () => {
  it.each([
    ['09:59', true],
    ['10:00', false],
    ['12:59', false],
    ['13:00', true],
    ['13:59', true],
    ['14:00', false],
    ['19:59', false],
    ['20:00', true],
  ])('at %s answers %s', (time, outside) => {
    expect(outsideLegalHours(at(`2026-11-30T${time}:00+01:00`), PARIS)).toBe(outside);
  });

  it('takes an epoch number as well as a Date', () => {
    expect(outsideLegalHours(Date.parse('2026-11-30T11:00:00+01:00'), PARIS)).toBe(false);
  });
});

describe('outsideLegalHours at the weekend', () => {
  it.each([
    ['a Saturday', '2026-11-28T11:00:00+01:00'],
    ['a Sunday', '2026-11-29T11:00:00+01:00'],
  ])('is outside all day on %s', (_day, iso) => {
    expect(outsideLegalHours(at(iso), PARIS)).toBe(true);
  });
});

describe('outsideLegalHours on public holidays', () => {
  it.each([
    ['14 July 2026', '2026-07-14', '2026-07-15'],
    ['Easter Monday 2026', '2026-04-06', '2026-04-07'],
    ['Ascension 2026', '2026-05-14', '2026-05-15'],
    ['Whit Monday 2026', '2026-05-25', '2026-05-26'],
    ['14 July 2027', '2027-07-14', '2027-07-15'],
    ['Easter Monday 2027', '2027-03-29', '2027-03-30'],
    ['Ascension 2027', '2027-05-06', '2027-05-07'],
    ['Whit Monday 2027', '2027-05-17', '2027-05-18'],
  ])('is outside on %s at 11:00, inside the working day after', (_name, holiday, dayAfter) => {
    expect(outsideLegalHours(at(`${holiday}T11:00:00+02:00`), PARIS)).toBe(true);
    expect(outsideLegalHours(at(`${dayAfter}T11:00:00+02:00`), PARIS)).toBe(false);
  });

  it.each([
    [2024, [3, 31]],
    [2025, [4, 20]],
    [2026, [4, 5]],
    [2027, [3, 28]],
    [2038, [4, 25]],
    [2285, [3, 22]],
  ])('computes Easter Sunday %i', (year, date) => {
    expect(easterSunday(year)).toEqual(date);
  });

  it('knows the eleven national holidays of 2026 and nothing else that year', () => {
    const holidays: string[] = [];
    for (let day = 0; day < 365; day += 1) {
      const date = new Date(Date.UTC(2026, 0, 1 + day));
      if (isFrenchPublicHoliday(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()))
        holidays.push(date.toISOString().slice(5, 10));
    }
    expect(holidays).toEqual([
      '01-01',
      '04-06',
      '05-01',
      '05-08',
      '05-14',
      '05-25',
      '07-14',
      '08-15',
      '11-01',
      '11-11',
      '12-25',
    ]);
  });
});

describe('the clock changes in Paris', () => {
  it('reads 10:00 as 08:00 UTC before the autumn change and 09:00 UTC after it (25 October 2026)', () => {
    expect(outsideLegalHours(at('2026-10-23T08:00:00Z'), PARIS)).toBe(false);
    expect(outsideLegalHours(at('2026-10-26T08:00:00Z'), PARIS)).toBe(true);
    expect(outsideLegalHours(at('2026-10-26T09:00:00Z'), PARIS)).toBe(false);
  });

  it('reads 20:00 as 19:00 UTC before the spring change and 18:00 UTC after it (29 March 2026)', () => {
    expect(outsideLegalHours(at('2026-03-27T18:59:00Z'), PARIS)).toBe(false);
    expect(outsideLegalHours(at('2026-03-30T18:30:00Z'), PARIS)).toBe(true);
    expect(outsideLegalHours(at('2026-03-30T17:59:00Z'), PARIS)).toBe(false);
  });

  it('gives the next boundary across the autumn change: Friday 20:00 CEST to Monday 10:00 CET', () => {
    expect(nextLegalHoursBoundary(at('2026-10-23T18:00:00Z'), PARIS).toISOString()).toBe('2026-10-26T09:00:00.000Z');
  });

  it('gives the next boundary across the spring change: Friday 20:00 CET to Monday 10:00 CEST', () => {
    expect(nextLegalHoursBoundary(at('2026-03-27T19:00:00Z'), PARIS).toISOString()).toBe('2026-03-30T08:00:00.000Z');
  });
});

describe('another LEGAL_HOURS_TZ: Indian/Reunion (UTC+4, no clock change)', () => {
  const REUNION = 'Indian/Reunion';

  it('reads the hours on Réunion’s clock, not on Paris’s', () => {
    // 06:00 UTC: 10:00 in Réunion (inside), 07:00 in Paris (outside).
    expect(outsideLegalHours(at('2026-11-30T06:00:00Z'), REUNION)).toBe(false);
    expect(outsideLegalHours(at('2026-11-30T06:00:00Z'), PARIS)).toBe(true);
    // 16:30 UTC: 20:30 in Réunion (outside), 17:30 in Paris (inside).
    expect(outsideLegalHours(at('2026-11-30T16:30:00Z'), REUNION)).toBe(true);
    expect(outsideLegalHours(at('2026-11-30T16:30:00Z'), PARIS)).toBe(false);
  });

  it('gives Réunion’s next boundary', () => {
    expect(nextLegalHoursBoundary(at('2026-11-30T16:30:00Z'), REUNION).toISOString()).toBe('2026-12-01T06:00:00.000Z');
  });
});

describe('nextLegalHoursBoundary', () => {
  it.each([
    ['Monday 09:59', '2026-11-30T09:59:00+01:00', '2026-11-30T10:00:00+01:00'],
    ['Monday 10:30', '2026-11-30T10:30:00+01:00', '2026-11-30T13:00:00+01:00'],
    ['Monday 13:00', '2026-11-30T13:00:00+01:00', '2026-11-30T14:00:00+01:00'],
    ['Monday 19:59:59', '2026-11-30T19:59:59+01:00', '2026-11-30T20:00:00+01:00'],
    ['Friday 20:00', '2026-12-04T20:00:00+01:00', '2026-12-07T10:00:00+01:00'],
    ['a Saturday', '2026-11-28T11:00:00+01:00', '2026-11-30T10:00:00+01:00'],
    ['the Friday before Easter Monday 2026', '2026-04-03T20:00:00+02:00', '2026-04-07T10:00:00+02:00'],
    ['Christmas Eve 2026 evening', '2026-12-24T20:00:00+01:00', '2026-12-28T10:00:00+01:00'],
  ])('from %s is the next flip', (_when, from, to) => {
    expect(nextLegalHoursBoundary(at(from), PARIS).getTime()).toBe(Date.parse(to));
  });

  it('returns an instant where the answer differs, with the same answer all the way up to it', () => {
    for (let hour = 0; hour < 24 * 9; hour += 5) {
      const from = Date.parse('2026-10-20T00:17:00Z') + hour * 3_600_000;
      const boundary = nextLegalHoursBoundary(from, PARIS).getTime();
      expect(boundary).toBeGreaterThan(from);
      expect(outsideLegalHours(boundary, PARIS)).not.toBe(outsideLegalHours(from, PARIS));
      expect(outsideLegalHours(boundary - 1000, PARIS)).toBe(outsideLegalHours(from, PARIS));
    }
  });
});
