// The rules in memory and which one applies to a number: one Map from the rule's spelling
// (`+33162001234` or `+33162*`) to a compact record, and the set of prefix lengths in use. A match
// tries the number itself, then each prefix length in use from the longest down: at most 16 Map
// reads, whatever the number of rules (O(digits)). At equal length (`+33162001234` and
// `+33162001234*`) allow wins. An expired rule is passed over, so a shorter one may apply.
//
// `version()` changes with every write and whenever an expiry passes (a sorted array of the
// expiries, searched only when `now` leaves the interval of the last answer), so the caches of
// finished answers can tell that a body made earlier may be wrong now. Pure; no I/O.
import {
  type ListMatch,
  type ListName,
  type ListRule,
  type OperatorLists,
  MAX_RULE_DIGITS,
} from '../ports/operator-lists.js';
import { coveringSpellings, parseRuleKey, type RuleKey } from './rule-key.js';

/**
 * What is kept per rule: dates as epoch ms, no copy of the rule's spelling (the Map's key). A rule
 * with no label, note nor expiry (most of a large list) is kept as one number, not an object:
 * its creation time, negated minus one for the allow list (PlainRecord); 16 bytes instead of 64.
 */
type StoredRecord = RuleRecord | number;

interface RuleRecord {
  readonly list: ListName;
  readonly label: string | undefined;
  readonly labelPublic: boolean;
  readonly note: string | undefined;
  readonly createdAtMs: number;
  /** Infinity when the rule does not expire. */
  readonly expiresAtMs: number;
}

export interface RuleIndex extends OperatorLists {
  /** Adds or replaces a rule; true when it replaced one. */
  set(rule: ListRule): boolean;
  /** Removes a rule; true when it was there. */
  delete(rule: string): boolean;
  /** Replaces every rule at once. */
  replaceAll(rules: Iterable<ListRule>): void;
  has(rule: string): boolean;
  get(rule: string): ListRule | undefined;
  /** Every rule held, expired ones included (what a store writes back). */
  allRules(): ListRule[];
  /** The same, one at a time (a store's write path walks it in slices rather than copying it whole). */
  rules(): IterableIterator<ListRule>;
  size(): number;
  /** Rules in force at `now`, per list (the metrics' gauge). */
  countByList(now?: number): Record<ListName, number>;
  /**
   * The one decision of the lists: the rule that decides for `digits` (E.164 digits without `+`)
   * at `now`, or null. For a number (`wildcard` false): the longest matching rule, the number
   * itself and the prefix of all its digits being the same length (allow wins a tie). For the
   * range `digits*`: the longest prefix rule no longer than it (an exact rule decides for its one
   * number, not for a range). O(digits). `match` (the phone routes), the blocklist feed and the
   * CLI's explanation all decide through it.
   */
  decide(digits: string, wildcard: boolean, now?: number): ListMatch | null;
  /**
   * The rules in force at `now`, one at a time and without their dates (what the feed reads, in
   * slices). The same walk as `activeRules` (one filter of the expired), which makes whole rules
   * of it and keeps them until the version changes.
   */
  inForce(now?: number): IterableIterator<RuleInForce>;
  /**
   * One page of the rules held (expired ones included), in the order of their spellings, that
   * `query` matches, and how many match in all: the admin console's search (GET
   * /admin/lists/search). One walk of the records; whole rules are made for the page only.
   */
  search(query: RuleQuery): { total: number; rules: ListRule[] };
}

/**
 * What a search asks (`RuleIndex.search`). A rule matches when no term is given, or when one of
 * them does: `text` in its label or note (case-insensitive), a string of `digitsContain`
 * anywhere in its digits, or one of `digitsStart` at their start.
 */
export interface RuleQuery {
  /** Lower-case text, matched against the label and the note. */
  text?: string;
  digitsContain?: readonly string[];
  digitsStart?: readonly string[];
  list?: ListName;
  offset: number;
  limit: number;
}

/** A rule in force as `RuleIndex.inForce` gives it (no dates: making 100,000 ISO dates costs the feed a rebuild's worth). */
export interface RuleInForce {
  rule: string;
  list: ListName;
  label: string | undefined;
}

function recordOf(rule: ListRule): StoredRecord {
  const createdAtMs = Date.parse(rule.createdAt);
  if (rule.label === undefined && rule.note === undefined && rule.expiresAt === undefined && createdAtMs >= 0) {
    return rule.list === 'allow' ? -createdAtMs - 1 : createdAtMs;
  }
  return {
    list: rule.list,
    label: rule.label,
    labelPublic: rule.labelPublic === true,
    note: rule.note,
    createdAtMs: Date.parse(rule.createdAt),
    expiresAtMs: rule.expiresAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(rule.expiresAt),
  };
}

/** A stored record as an object (a plain one is unfolded on the way out). */
function unfold(stored: StoredRecord): RuleRecord {
  if (typeof stored !== 'number') return stored;
  return stored < 0
    ? {
        list: 'allow',
        label: undefined,
        labelPublic: false,
        note: undefined,
        createdAtMs: -stored - 1,
        expiresAtMs: Number.POSITIVE_INFINITY,
      }
    : {
        list: 'block',
        label: undefined,
        labelPublic: false,
        note: undefined,
        createdAtMs: stored,
        expiresAtMs: Number.POSITIVE_INFINITY,
      };
}

const expiryOf = (stored: StoredRecord): number =>
  typeof stored === 'number' ? Number.POSITIVE_INFINITY : stored.expiresAtMs;
const listOf = (stored: StoredRecord): ListName =>
  typeof stored === 'number' ? (stored < 0 ? 'allow' : 'block') : stored.list;

function ruleOf(spelling: string, stored: StoredRecord): ListRule {
  const record = unfold(stored);
  return {
    rule: spelling,
    list: record.list,
    ...(record.label === undefined ? {} : { label: record.label }),
    ...(record.labelPublic ? { labelPublic: true } : {}),
    ...(record.note === undefined ? {} : { note: record.note }),
    createdAt: new Date(record.createdAtMs).toISOString(),
    ...(record.expiresAtMs === Number.POSITIVE_INFINITY
      ? {}
      : { expiresAt: new Date(record.expiresAtMs).toISOString() }),
  };
}

const matchOf = (spelling: string, stored: StoredRecord): ListMatch =>
  typeof stored === 'number'
    ? { list: listOf(stored), rule: spelling, label: null, labelPublic: false }
    : { list: stored.list, rule: spelling, label: stored.label ?? null, labelPublic: stored.labelPublic };

export function createRuleIndex(rules: Iterable<ListRule> = []): RuleIndex {
  const records = new Map<string, StoredRecord>();
  // How many prefix rules have each digit count (index = digits after `+`).
  const prefixLengths = new Uint32Array(MAX_RULE_DIGITS + 1);
  let generation = 0;
  // How many records expire (a finite expiry): none, the expiries need no scan of every rule.
  let expiring = 0;
  // Sorted expiries (finite ones), rebuilt on the first read after a write.
  let expiries: Float64Array | undefined;
  // `passed` expiries are ≤ now for every now in [low, high).
  let window = { low: Number.POSITIVE_INFINITY, high: Number.NEGATIVE_INFINITY, passed: 0 };
  let active: { version: string; rules: readonly ListRule[] } | undefined;
  // The records in the order of their spellings, for the search's pages: sorted again on the first
  // search after a write (about 100 ms for 100,000 rules; a search itself is one walk of them).
  let sorted: Array<[string, StoredRecord]> | undefined;

  const changed = (): void => {
    generation += 1;
    expiries = undefined;
    window = { low: Number.POSITIVE_INFINITY, high: Number.NEGATIVE_INFINITY, passed: 0 };
    active = undefined;
    sorted = undefined;
  };

  const countPrefix = (key: RuleKey | undefined, delta: number): void => {
    if (key?.wildcard === true) prefixLengths[key.digits.length] = (prefixLengths[key.digits.length] ?? 0) + delta;
  };

  const finite = (record: StoredRecord | undefined): number =>
    record !== undefined && expiryOf(record) !== Number.POSITIVE_INFINITY ? 1 : 0;

  const setRecord = (rule: ListRule): boolean => {
    const previous = records.get(rule.rule);
    const replaced = previous !== undefined;
    if (!replaced) countPrefix(parseRuleKey(rule.rule), 1);
    const record = recordOf(rule);
    expiring += finite(record) - finite(previous);
    records.set(rule.rule, record);
    return replaced;
  };

  for (const rule of rules) setRecord(rule);

  function passedExpiries(now: number): number {
    if (now >= window.low && now < window.high) return window.passed;
    if (expiries === undefined) {
      const times: number[] = [];
      if (expiring > 0)
        for (const record of records.values())
          if (typeof record !== 'number' && record.expiresAtMs !== Number.POSITIVE_INFINITY)
            times.push(record.expiresAtMs);
      expiries = Float64Array.from(times).sort();
    }
    // The number of expiries ≤ now.
    let lo = 0;
    let hi = expiries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((expiries[mid] ?? 0) <= now) lo = mid + 1;
      else hi = mid;
    }
    window = {
      low: lo === 0 ? Number.NEGATIVE_INFINITY : (expiries[lo - 1] ?? 0),
      high: lo === expiries.length ? Number.POSITIVE_INFINITY : (expiries[lo] ?? 0),
      passed: lo,
    };
    return lo;
  }

  /** The prefix rule in force at `now` of the most digits (at most `maxDigits`) that `plusDigits` starts with: the one walk of the prefix lengths in use. */
  function longestPrefixRule(plusDigits: string, maxDigits: number, now: number): ListMatch | null {
    for (let length = Math.min(maxDigits, MAX_RULE_DIGITS); length >= 1; length -= 1) {
      if (!prefixLengths[length]) continue;
      const spelling = `${plusDigits.slice(0, length + 1)}*`;
      const record = records.get(spelling);
      if (record !== undefined && expiryOf(record) > now) return matchOf(spelling, record);
    }
    return null;
  }

  /** The records in force at `now`: the one walk of the rules with the expiry filter (`inForce`, `activeRules`). */
  function* live(now: number): Generator<[string, StoredRecord]> {
    for (const entry of records) if (expiryOf(entry[1]) > now) yield entry;
  }

  function matches(spelling: string, stored: StoredRecord, query: RuleQuery): boolean {
    if (query.list !== undefined && listOf(stored) !== query.list) return false;
    const { text, digitsContain = [], digitsStart = [] } = query;
    if (text === undefined && digitsContain.length === 0 && digitsStart.length === 0) return true;
    for (const digits of digitsStart) if (spelling.startsWith(digits, 1)) return true;
    for (const digits of digitsContain) if (spelling.includes(digits)) return true;
    if (text !== undefined && typeof stored !== 'number')
      return stored.label?.toLowerCase().includes(text) === true || stored.note?.toLowerCase().includes(text) === true;
    return false;
  }

  function search(query: RuleQuery): { total: number; rules: ListRule[] } {
    sorted ??= [...records].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const rules: ListRule[] = [];
    const end = query.offset + query.limit;
    const everything =
      query.list === undefined &&
      query.text === undefined &&
      (query.digitsContain ?? []).length === 0 &&
      (query.digitsStart ?? []).length === 0;
    if (everything) {
      for (const [spelling, stored] of sorted.slice(query.offset, end)) rules.push(ruleOf(spelling, stored));
      return { total: sorted.length, rules };
    }
    let total = 0;
    for (const [spelling, stored] of sorted) {
      if (!matches(spelling, stored, query)) continue;
      if (total >= query.offset && total < end) rules.push(ruleOf(spelling, stored));
      total += 1;
    }
    return { total, rules };
  }

  /** `decide` for `+digits`: the one decision of the lists (see RuleIndex.decide). */
  function decision(plusDigits: string, wildcard: boolean, now: number): ListMatch | null {
    if (records.size === 0) return null;
    const digits = plusDigits.length - 1;
    if (wildcard) return longestPrefixRule(plusDigits, digits, now);
    // The number itself and a prefix of all its digits are the same length: allow wins.
    const exact = records.get(plusDigits);
    const whole = prefixLengths[digits] ? records.get(`${plusDigits}*`) : undefined;
    const exactLive = exact !== undefined && expiryOf(exact) > now ? exact : undefined;
    const wholeLive = whole !== undefined && expiryOf(whole) > now ? whole : undefined;
    if (
      exactLive !== undefined &&
      (listOf(exactLive) === 'allow' || wholeLive === undefined || listOf(wholeLive) === 'block')
    )
      return matchOf(plusDigits, exactLive);
    if (wholeLive !== undefined) return matchOf(`${plusDigits}*`, wholeLive);
    return longestPrefixRule(plusDigits, digits - 1, now);
  }

  const index: RuleIndex = {
    // A number's decision, given its E.164 as the phone routes hold it (no copy of its digits on the hot path).
    match: (e164, now = Date.now()) => decision(e164, false, now),
    activeRules(now = Date.now()) {
      const version = index.version(now);
      if (active?.version !== version)
        active = { version, rules: Array.from(live(now), ([spelling, record]) => ruleOf(spelling, record)) };
      return active.rules;
    },
    version(now = Date.now()) {
      return `${generation}.${passedExpiries(now)}`;
    },
    set(rule) {
      const replaced = setRecord(rule);
      changed();
      return replaced;
    },
    delete(rule) {
      const previous = records.get(rule);
      if (previous === undefined || !records.delete(rule)) return false;
      expiring -= finite(previous);
      countPrefix(parseRuleKey(rule), -1);
      changed();
      return true;
    },
    replaceAll(next) {
      records.clear();
      prefixLengths.fill(0);
      expiring = 0;
      for (const rule of next) setRecord(rule);
      changed();
    },
    has: (rule) => records.has(rule),
    get(rule) {
      const record = records.get(rule);
      return record === undefined ? undefined : ruleOf(rule, record);
    },
    allRules: () => Array.from(records, ([spelling, record]) => ruleOf(spelling, record)),
    *rules() {
      for (const [spelling, record] of records) yield ruleOf(spelling, record);
    },
    size: () => records.size,
    decide: (digits, wildcard, now = Date.now()) => decision(`+${digits}`, wildcard, now),
    *inForce(now = Date.now()) {
      for (const [rule, record] of live(now))
        yield { rule, list: listOf(record), label: typeof record === 'number' ? undefined : record.label };
    },
    search,
    countByList(now = Date.now()) {
      const counts: Record<ListName, number> = { allow: 0, block: 0 };
      for (const record of records.values()) if (expiryOf(record) > now) counts[listOf(record)] += 1;
      return counts;
    },
  };
  return index;
}

/**
 * Why a rule applies to a number, in words (`phone-rep list check`): the index's own decision
 * (`decide`), then every other rule covering the number (coveringSpellings, in the order the
 * decision weighs them) and why it does not apply.
 */
export function explainDecision(e164: string, index: RuleIndex, now = Date.now()): string[] {
  const digits = e164.slice(1);
  const decision = index.decide(digits, false, now);
  if (decision === null) return [`${e164}: no rule applies; the sources decide.`];
  const lines = [
    `${e164}: ${decision.list} by rule ${decision.rule}${decision.label === null ? '' : ` (label "${decision.label}")`}.`,
  ];
  const decidingDigits = parseRuleKey(decision.rule)?.digits.length ?? 0;
  const others = coveringSpellings({ digits, wildcard: false }).filter(
    (spelling) => spelling !== decision.rule && index.has(spelling),
  );
  if (others.length === 0) {
    lines.push('It is the only rule that matches this number.');
    return lines;
  }
  for (const spelling of others) {
    const rule = index.get(spelling);
    if (rule === undefined) continue;
    const expired = rule.expiresAt !== undefined && Date.parse(rule.expiresAt) <= now;
    const why = expired
      ? `it expired at ${rule.expiresAt}`
      : (parseRuleKey(spelling)?.digits.length ?? 0) < decidingDigits
        ? 'it is shorter (the longest matching rule wins)'
        : 'it has the same length and allow wins a tie';
    lines.push(`Also matches ${spelling} (${rule.list}), which does not apply: ${why}.`);
  }
  return lines;
}
