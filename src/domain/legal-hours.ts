// Legal calling hours for telephone canvassing of consumers in France (Décret n° 2022-1313 of
// 13 October 2022, Code de la consommation D. 223-8): Monday to Friday, 10:00–13:00 and
// 14:00–20:00, never on a public holiday, read in one time zone (LEGAL_HOURS_TZ). Pure: the
// instant is a parameter, the zone's rules are the platform's (Intl.DateTimeFormat), so a test
// or a `?at=` gives any instant and the answer depends on nothing else (docs/legal-hours.md).
//
// The holidays are France's eleven national ones (Code du travail L. 3133-1), Easter computed
// here: a dozen lines of a well-known algorithm, tested over years, rather than a dependency
// with every country's calendar for one date a year. Alsace-Moselle's two extra days (Good
// Friday, 26 December) and the overseas departments' abolition days are not counted: a
// documented non-goal (docs/legal-hours.md).

/** The minutes of the local day when canvassing is allowed, [from, to). */
const ALLOWED_MINUTES: ReadonlyArray<readonly [number, number]> = [
  [10 * 60, 13 * 60],
  [14 * 60, 20 * 60],
];
/** The local hours at which the answer may flip: the ends of the allowed spans. */
const BOUNDARY_HOURS = [10, 13, 14, 20] as const;
/** Longest run of days without a legal hour to search through (a holiday Friday, a weekend, a holiday Monday…). */
const SEARCH_DAYS = 14;
const DAY_MS = 86_400_000;

/** True when `timeZone` is a time zone the platform knows (an IANA name such as Europe/Paris). */
export function isKnownTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

interface LocalTime {
  year: number;
  /** 1–12. */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** The wall-clock time in `timeZone` at `epochMs`. */
function localTimeAt(epochMs: number, timeZone: string): LocalTime {
  const fields: Record<string, number> = {};
  for (const part of formatterOf(timeZone).formatToParts(epochMs)) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  return {
    year: fields.year ?? 0,
    month: fields.month ?? 1,
    day: fields.day ?? 1,
    hour: fields.hour ?? 0,
    minute: fields.minute ?? 0,
    second: fields.second ?? 0,
  };
}

/** The zone's offset from UTC at `epochMs`, in milliseconds (Paris in summer: +2 h). */
function offsetMs(epochMs: number, timeZone: string): number {
  const local = localTimeAt(epochMs, timeZone);
  const asUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  return asUtc - Math.floor(epochMs / 1000) * 1000;
}

/** The instant a wall-clock time in `timeZone` names (the later reading when a clock change repeats it). */
function instantOf(year: number, month: number, day: number, hour: number, timeZone: string): number {
  const wall = Date.UTC(year, month - 1, day, hour);
  const first = wall - offsetMs(wall, timeZone);
  return wall - offsetMs(first, timeZone);
}

/** Easter Sunday of a Gregorian year (the anonymous Gregorian algorithm, Meeus/Jones/Butcher), as [month, day]. */
export function easterSunday(year: number): [number, number] {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return [month, day];
}

const FIXED_HOLIDAYS: ReadonlySet<string> = new Set(['1-1', '5-1', '5-8', '7-14', '8-15', '11-1', '11-11', '12-25']);
/** Easter Monday, Ascension Thursday and Whit Monday, in days after Easter Sunday. */
const EASTER_OFFSETS_DAYS = [1, 39, 50] as const;

/** True on France's eleven national public holidays (month 1–12). */
export function isFrenchPublicHoliday(year: number, month: number, day: number): boolean {
  if (FIXED_HOLIDAYS.has(`${month}-${day}`)) return true;
  const [easterMonth, easterDay] = easterSunday(year);
  const easter = Date.UTC(year, easterMonth - 1, easterDay);
  const date = Date.UTC(year, month - 1, day);
  return EASTER_OFFSETS_DAYS.some((offset) => easter + offset * DAY_MS === date);
}

/**
 * True when `at` falls outside the hours canvassing is allowed, in `timeZone`: a Saturday, a
 * Sunday, a French national public holiday, or a weekday outside 10:00–13:00 and 14:00–20:00
 * (13:00 and 20:00 themselves are outside; 10:00 and 14:00 inside).
 */
export function outsideLegalHours(at: Date | number, timeZone: string): boolean {
  const local = localTimeAt(typeof at === 'number' ? at : at.getTime(), timeZone);
  const weekday = new Date(Date.UTC(local.year, local.month - 1, local.day)).getUTCDay();
  if (weekday === 0 || weekday === 6) return true;
  if (isFrenchPublicHoliday(local.year, local.month, local.day)) return true;
  const minutes = local.hour * 60 + local.minute;
  return !ALLOWED_MINUTES.some(([from, to]) => minutes >= from && minutes < to);
}

/**
 * The next instant after `at` when `outsideLegalHours` gives the other answer: the moment an
 * answer that depends on it stops being true (a cache entry's expiry). The answer can only flip at
 * 10:00, 13:00, 14:00 or 20:00 local time, so those are the only candidates, day after day.
 */
export function nextLegalHoursBoundary(at: Date | number, timeZone: string): Date {
  const epochMs = typeof at === 'number' ? at : at.getTime();
  const now = outsideLegalHours(epochMs, timeZone);
  const today = localTimeAt(epochMs, timeZone);
  for (let dayIndex = 0; dayIndex <= SEARCH_DAYS; dayIndex += 1) {
    const date = new Date(Date.UTC(today.year, today.month - 1, today.day + dayIndex));
    for (const hour of BOUNDARY_HOURS) {
      const candidate = instantOf(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), hour, timeZone);
      if (candidate > epochMs && outsideLegalHours(candidate, timeZone) !== now) return new Date(candidate);
    }
  }
  // Unreachable with the national calendar (no fortnight without a working day); a safe expiry anyway.
  return new Date(epochMs + DAY_MS);
}
