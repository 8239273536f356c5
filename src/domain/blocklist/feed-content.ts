// What the blocklist feed holds (docs/integrations/blocklist-feed.md), as a pure function of its
// inputs: the operator's rules in force, ARCEP's NPV ranges when VERDICT_NPV=block, the numbers
// this deployment's reporters confidently reported as spam (docs/reports.md), and the numbers
// looked up here whose verdict was block. Ranked in that order and capped; nothing the
// allow list covers is ever included, and a wildcard that would cover an allowed number is split
// into the smaller ranges around it. Then grouped into cards of at most 9 numbers (the Fritz!Box
// limit per phone-book entry) by prefix buckets, so a card's identity depends on its own prefix,
// not on its neighbours (the bucketing PhoneBlock adopted for stable block ids).
import { createRuleIndex, type RuleIndex, type RuleInForce } from '../lists/rule-index.js';
import { isRuleSpelling, parseRuleKey, type RuleKey, ruleSpelling } from '../lists/rule-key.js';
import type { ListRule } from '../ports/operator-lists.js';
import { runToEnd, type Steps } from '../steps.js';

/** Why an entry is in the feed, in rank order. */
export type FeedSource = 'rule' | 'npv' | 'call_centre' | 'reported' | 'recent';

/** One number or range (a rule's key: `digits` are the E.164 digits without `+`; a wildcard covers every number starting with them). */
export interface FeedEntry extends RuleKey {
  source: FeedSource;
  /** What the card says about it: the rule's label, the NPV wording, or the `/cid` line. */
  reason: string;
}

/** A number looked up here whose verdict was block. */
export interface BlockedCaller {
  e164: string;
  /** The 1-9 score, or null when the verdict came from the NPV range alone. */
  score: number | null;
  /** The `/cid` line at that time. */
  reason: string;
  atMs: number;
}

/** A number the reports' evidence says is spam (CallerReports.reportedSpam). */
export interface ReportedCaller {
  e164: string;
  /** Distinct spam reporters, the first rank. */
  reporters: number;
  /** Decayed spam weight, the second rank. */
  spamWeight: number;
  /** The latest vote (ms since the epoch), the third rank. */
  lastReportAtMs: number;
  /** The `/cid` line it gets (`SIGNALÉ 3× Arnaque`). */
  reason: string;
}

/** The lists' index as the feed reads it: one decision per entry, O(digits) (domain/lists/rule-index.ts). */
export type FeedRuleIndex = Pick<RuleIndex, 'decide' | 'inForce'>;

export interface FeedInputs {
  /** The operator's rules in force: their index, or a list of them (indexed here, in steps). */
  rules: readonly ListRule[] | FeedRuleIndex;
  /** The instant the rules are read at (expiries); default now. */
  nowMs?: number;
  /** E.164 prefixes (`+33162`) of the NPV ranges; empty unless VERDICT_NPV=block. */
  npvPrefixes: readonly string[];
  /** E.164 prefixes (`+331897`) of the call-centre operators' blocks; empty (absent) unless VERDICT_CALL_CENTRE=block. */
  callCentrePrefixes?: readonly string[];
  /** Numbers reported as spam here (docs/reports.md); none when absent. */
  reported?: readonly ReportedCaller[];
  recent: readonly BlockedCaller[];
  maxEntries: number;
  /** The reasons' words. */
  wording: { rule: string; npv: string; callCentre?: string };
}

/** A rule as its key (`+33162*` → 33162, wildcard) and list. */
interface RuleShape extends RuleKey {
  list: ListRule['list'];
}

const byDigits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The first index of `sorted` (within [lo, hi)) whose value is not below `value` (binary search). */
function lowerBound(sorted: readonly string[], value: string, from = 0, to = sorted.length): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] ?? '') < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The ranges of `prefix*` left once the allow rules inside it are taken out: `allows` is sorted,
 * and its items [lo, hi) are every allow rule's digits starting with `prefix`. An allow rule of
 * the prefix's own digits ends the branch, whether it is a range or one number (numbers longer
 * than a whole number are not worth a phone-book line); otherwise the range is cut into its ten
 * one-digit-longer ranges, each split again. Yields one range at a time (a caller stops at its
 * cap): no array of every range is ever made, and the depth is at most 15.
 */
function* splitRanges(
  prefix: string,
  allows: readonly string[],
  lo: number,
  hi: number,
): Generator<string, void, void> {
  if (lo >= hi) {
    yield prefix;
    return;
  }
  if (allows[lo] === prefix) return;
  let start = lo;
  for (let digit = 0; digit <= 9; digit += 1) {
    const child = `${prefix}${digit}`;
    // The allows starting with `child` are the next ones, up to the first at or past `child:`.
    const end = lowerBound(allows, `${child}:`, start, hi);
    yield* splitRanges(child, allows, start, end);
    start = end;
  }
}

/**
 * `prefix*` minus the allow rules inside it, its own digits included (an exact allowed number
 * `+33612345678` inside `+33612345678*` ends the range): the ten one-digit-longer ranges at each
 * level down to each allowed rule, which itself is left out.
 */
export function splitAround(prefix: string, allowedInside: readonly RuleShape[]): string[] {
  const allows = allowedInside
    .map((rule) => rule.digits)
    .filter((digits) => digits.startsWith(prefix))
    .sort(byDigits);
  return [...splitRanges(prefix, allows, 0, allows.length)];
}

const DAY_MS = 86_400_000;

function compareRecent(a: BlockedCaller, b: BlockedCaller): number {
  const dayA = Math.floor(a.atMs / DAY_MS);
  const dayB = Math.floor(b.atMs / DAY_MS);
  if (dayA !== dayB) return dayB - dayA;
  if ((a.score ?? 0) !== (b.score ?? 0)) return (b.score ?? 0) - (a.score ?? 0);
  if (a.atMs !== b.atMs) return b.atMs - a.atMs;
  return a.e164 < b.e164 ? -1 : a.e164 > b.e164 ? 1 : 0;
}

/** Reported callers: most spam reporters first, then the heaviest spam weight, then the latest report. */
export function compareReported(a: ReportedCaller, b: ReportedCaller): number {
  if (a.reporters !== b.reporters) return b.reporters - a.reporters;
  if (a.spamWeight !== b.spamWeight) return b.spamWeight - a.spamWeight;
  if (a.lastReportAtMs !== b.lastReportAtMs) return b.lastReportAtMs - a.lastReportAtMs;
  return a.e164 < b.e164 ? -1 : a.e164 > b.e164 ? 1 : 0;
}

/** Recent callers, most recent day first, then highest score, then latest. */
export function rankRecent(recent: readonly BlockedCaller[]): BlockedCaller[] {
  return [...recent].sort(compareRecent);
}

/** Work items (rules, ranges, numbers, buckets) in one step (domain/steps.ts). */
const ITEMS_PER_STEP = 8;
/** Items sorted at once by the engine's sort, and merged in one step. */
const SORT_RUN = 256;

/**
 * A stable sort in steps: runs of SORT_RUN items sorted at once, then merged pairwise, a yield
 * point every SORT_RUN items, so that sorting 100,000 rules never holds the loop.
 */
export function* sortInSteps<T>(items: readonly T[], compare: (a: T, b: T) => number): Steps<T[]> {
  let source: T[] = [];
  for (let start = 0; start < items.length; start += SORT_RUN) {
    for (const item of items.slice(start, start + SORT_RUN).sort(compare)) source.push(item);
    yield;
  }
  let target: T[] = [];
  for (let width = SORT_RUN; width < source.length; width *= 2) {
    target = [];
    for (let left = 0; left < source.length; left += 2 * width) {
      const middle = Math.min(left + width, source.length);
      const right = Math.min(left + 2 * width, source.length);
      let i = left;
      let j = middle;
      while (i < middle || j < right) {
        const a = source[i];
        const b = source[j];
        if (a !== undefined && i < middle && (j >= right || b === undefined || compare(a, b) <= 0)) {
          target.push(a);
          i += 1;
        } else if (b !== undefined && j < right) {
          target.push(b);
          j += 1;
        } else break;
        if (target.length % SORT_RUN === 0) yield;
      }
    }
    source = target;
  }
  return source;
}

/** The least rules a batch of block rules holds (a small cap still reads them in few passes). */
const MIN_BATCH = 64;

/** A rule's spelling sorts as its digits: `+` first, and `*` before every digit, so `+337*` < `+3371*` < `+33710`. */
const bySpelling = (a: RuleInForce, b: RuleInForce): number => byDigits(a.rule, b.rule);

/**
 * The `limit` block rules in force, ranges or numbers (`wildcard`), that come first in digit
 * order after the spelling `after`, sorted: one pass over `rules` with a bounded max-heap, so
 * that no more than `limit` of them are held however many the lists hold.
 */
function* nextBlockRules(
  rules: Iterable<RuleInForce>,
  wildcard: boolean,
  after: string,
  limit: number,
  pause: () => boolean,
): Steps<RuleInForce[]> {
  // heap[0] is the greatest held; a rule below it replaces it once the heap is full.
  const heap: RuleInForce[] = [];
  const above = (at: number, other: number): boolean =>
    byDigits((heap[at] as RuleInForce).rule, (heap[other] as RuleInForce).rule) > 0;
  const swap = (at: number, other: number): void => {
    const held = heap[at] as RuleInForce;
    heap[at] = heap[other] as RuleInForce;
    heap[other] = held;
  };
  for (const rule of rules) {
    if (pause()) yield;
    if (rule.list !== 'block' || rule.rule.endsWith('*') !== wildcard || rule.rule <= after) continue;
    if (heap.length === limit && rule.rule >= (heap[0] as RuleInForce).rule) continue;
    if (!isRuleSpelling(rule.rule)) continue;
    if (heap.length < limit) {
      heap.push(rule);
      for (let at = heap.length - 1; at > 0 && above(at, (at - 1) >> 1); at = (at - 1) >> 1) swap(at, (at - 1) >> 1);
      continue;
    }
    heap[0] = rule;
    for (let at = 0; ;) {
      const left = 2 * at + 1;
      const right = left + 1;
      let top = at;
      if (left < heap.length && above(left, top)) top = left;
      if (right < heap.length && above(right, top)) top = right;
      if (top === at) break;
      swap(at, top);
      at = top;
    }
  }
  return heap.sort(bySpelling);
}

/** The feed's entries, ranked and capped. */
export function buildFeedEntries(inputs: FeedInputs): FeedEntry[] {
  return runToEnd(feedEntrySteps(inputs));
}

const isRuleList = (rules: FeedInputs['rules']): rules is readonly ListRule[] => Array.isArray(rules);

/**
 * `buildFeedEntries` as steps, so that a large feed is built without holding the loop. Every
 * entry is decided by one `decide` on the lists' index (O(digits)), never by scanning the rules:
 * linear in the rules (and n log n for their order) whatever their mix.
 */
export function* feedEntrySteps(inputs: FeedInputs): Steps<FeedEntry[]> {
  let items = 0;
  const pause = (): boolean => (items += 1) % ITEMS_PER_STEP === 0;
  const nowMs = inputs.nowMs ?? Date.now();
  let index: FeedRuleIndex;
  if (isRuleList(inputs.rules)) {
    const built = createRuleIndex();
    for (const rule of inputs.rules) {
      if (isRuleSpelling(rule.rule)) built.set(rule);
      if (pause()) yield;
    }
    index = built;
  } else {
    index = inputs.rules;
  }

  const entries: FeedEntry[] = [];
  const wildcards = new Set<string>();
  const exact = new Set<string>();
  const full = (): boolean => entries.length >= inputs.maxEntries;
  /** Whether a listed range holds `digits` (a prefix of it is listed): O(digits). */
  const coveredByWildcard = (digits: string): boolean => {
    for (let length = 1; length <= digits.length; length += 1) if (wildcards.has(digits.slice(0, length))) return true;
    return false;
  };
  const reasonOf = (rule: RuleInForce): string => rule.label?.trim() || inputs.wording.rule;
  /** A rule's digits; only rules whose spelling parsed reach here (nextBlockRules). */
  const digitsOf = (rule: RuleInForce): string => parseRuleKey(rule.rule)?.digits ?? '';

  /**
   * Every allow rule's digits (exact or range: both end a split branch) that start with one of
   * `prefixes`, sorted: one pass over the rules, keeping only those inside the ranges at hand.
   */
  function* allowsInside(prefixes: readonly string[]): Steps<string[]> {
    const wanted = new Set(prefixes);
    const lengths = [...new Set(prefixes.map((prefix) => prefix.length))].sort((a, b) => a - b);
    const inside: string[] = [];
    for (const rule of index.inForce(nowMs)) {
      if (pause()) yield;
      if (rule.list !== 'allow') continue;
      const digits = parseRuleKey(rule.rule)?.digits;
      if (digits === undefined) continue;
      for (const length of lengths) {
        if (length > digits.length) break;
        if (wanted.has(digits.slice(0, length))) {
          inside.push(digits);
          break;
        }
      }
    }
    return inside.sort(byDigits);
  }

  function* addRange(prefix: string, source: FeedSource, reason: string, allows: readonly string[]): Steps<void> {
    // Every allow rule inside the range, its own digits included: an allowed number or range is
    // never covered (a longer block rule inside an allowed part is listed on its own).
    const lo = lowerBound(allows, prefix);
    const hi = lowerBound(allows, `${prefix}:`);
    for (const range of splitRanges(prefix, allows, lo, hi)) {
      if (full()) return;
      if (pause()) yield;
      if (coveredByWildcard(range)) continue;
      wildcards.add(range);
      entries.push({ digits: range, wildcard: true, source, reason });
    }
  }
  const addNumber = (digits: string, source: FeedSource, reason: string): void => {
    if (full() || exact.has(digits) || coveredByWildcard(digits)) return;
    exact.add(digits);
    entries.push({ digits, wildcard: false, source, reason });
  };

  // 1. The operator's block rules the lists decide block for: ranges first (they may cover exact
  // ones), then numbers, each group in digit order, so a range comes before the longer ones
  // inside it. Read in batches (nextBlockRules): a rebuild holds the few rules the capped feed
  // can take, never a sorted copy of every rule.
  for (const wildcard of [true, false]) {
    let after = '';
    for (let batch = Math.max(inputs.maxEntries, MIN_BATCH); !full(); batch *= 4) {
      const rules = yield* nextBlockRules(index.inForce(nowMs), wildcard, after, batch, pause);
      const allows = wildcard ? yield* allowsInside(rules.map(digitsOf)) : [];
      for (const rule of rules) {
        if (full()) return entries;
        if (pause()) yield;
        const digits = digitsOf(rule);
        if (index.decide(digits, wildcard, nowMs)?.list !== 'block') continue;
        if (wildcard) yield* addRange(digits, 'rule', reasonOf(rule), allows);
        else addNumber(digits, 'rule', reasonOf(rule));
      }
      const last = rules.at(-1);
      if (rules.length < batch || last === undefined) break;
      after = last.rule;
    }
  }
  // 2. NPV ranges, unless an allow rule decides for the whole range.
  const npvRanges = inputs.npvPrefixes
    .map((prefix) => parseRuleKey(`${prefix}*`)?.digits)
    .filter((digits) => digits !== undefined);
  const npvAllows = npvRanges.length === 0 || full() ? [] : yield* allowsInside(npvRanges);
  for (const digits of npvRanges) {
    if (full()) return entries;
    if (pause()) yield;
    if (index.decide(digits, true, nowMs)?.list === 'allow') continue;
    yield* addRange(digits, 'npv', inputs.wording.npv, npvAllows);
  }
  // 2b. Call-centre operators' blocks (VERDICT_CALL_CENTRE=block), the same way; one under an
  // NPV prefix is the NPV range's (the answers give it `npv`, not `call_centre_operator`).
  const npvDigits = inputs.npvPrefixes.map((prefix) => prefix.replace('+', ''));
  const centreRanges = (inputs.callCentrePrefixes ?? [])
    .map((prefix) => parseRuleKey(`${prefix}*`)?.digits)
    .filter((digits): digits is string => digits !== undefined && !npvDigits.some((npv) => digits.startsWith(npv)));
  const centreAllows = centreRanges.length === 0 || full() ? [] : yield* allowsInside(centreRanges);
  for (const digits of centreRanges) {
    if (full()) return entries;
    if (pause()) yield;
    if (index.decide(digits, true, nowMs)?.list === 'allow') continue;
    yield* addRange(digits, 'call_centre', inputs.wording.callCentre ?? '', centreAllows);
  }
  // 3. Numbers reported here as spam, unless the allow list decides for them: after the
  // operator's decisions and before the score's, as in the answers.
  const reported = yield* sortInSteps(inputs.reported ?? [], compareReported);
  for (const caller of reported) {
    if (full()) return entries;
    if (pause()) yield;
    const number = parseRuleKey(caller.e164);
    if (number === undefined || number.digits.length < 4 || index.decide(number.digits, false, nowMs)?.list === 'allow')
      continue;
    addNumber(number.digits, 'reported', caller.reason);
  }
  // 4. Numbers looked up here whose verdict was block, unless the allow list decides for them.
  const ranked = yield* sortInSteps(inputs.recent, compareRecent);
  for (const caller of ranked) {
    if (full()) break;
    if (pause()) yield;
    const number = parseRuleKey(caller.e164);
    if (number === undefined || number.digits.length < 4 || index.decide(number.digits, false, nowMs)?.list === 'allow')
      continue;
    addNumber(number.digits, 'recent', caller.reason);
  }
  return entries;
}

/** A phone-book entry: at most CARD_MAX_NUMBERS numbers with one reason. */
export interface FeedCard {
  /** Stable while the card's bucket is: `<reason hash>-<prefix>`. */
  uid: string;
  reason: string;
  entries: FeedEntry[];
}

/** The Fritz!Box's limit of numbers per phone-book entry. */
export const CARD_MAX_NUMBERS = 9;
const FIRST_BUCKET_DIGITS = 4;

/**
 * Groups entries into cards: by reason, then by the shortest digit prefix (4 digits at least)
 * whose bucket holds at most 9 entries. A busy bucket is split one digit further; entries shorter than
 * the split stay together in a bucket of their own.
 */
export function groupIntoCards(entries: readonly FeedEntry[], reasonKey: (reason: string) => string): FeedCard[] {
  return runToEnd(cardSteps(entries, reasonKey));
}

/** `groupIntoCards` as steps (see `Steps`). */
export function* cardSteps(entries: readonly FeedEntry[], reasonKey: (reason: string) => string): Steps<FeedCard[]> {
  const byReason = new Map<string, FeedEntry[]>();
  for (const entry of entries) {
    const group = byReason.get(entry.reason);
    if (group === undefined) byReason.set(entry.reason, [entry]);
    else group.push(entry);
  }
  const cards: FeedCard[] = [];
  for (const [reason, group] of byReason) {
    const key = reasonKey(reason);
    const bucket = function* (members: FeedEntry[], depth: number, label: string): Steps<void> {
      yield;
      if (depth > FIRST_BUCKET_DIGITS && members.length <= CARD_MAX_NUMBERS) {
        cards.push({ uid: `${key}-${label}`, reason, entries: [...members].sort(compareEntries) });
        return;
      }
      const children = new Map<string, FeedEntry[]>();
      for (const member of members) {
        const child =
          member.digits.length >= depth
            ? member.digits.slice(0, depth)
            : `${member.digits}${member.wildcard ? 'w' : 'x'}`;
        const list = children.get(child);
        if (list === undefined) children.set(child, [member]);
        else list.push(member);
      }
      for (const [child, list] of [...children].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        // A bucket that cannot be split (entries all shorter than the depth) is cut in nines.
        if (list.length > CARD_MAX_NUMBERS && list.every((member) => member.digits.length < depth)) {
          const sorted = [...list].sort(compareEntries);
          for (let start = 0; start < sorted.length; start += CARD_MAX_NUMBERS)
            cards.push({
              uid: `${key}-${child}-${start / CARD_MAX_NUMBERS}`,
              reason,
              entries: sorted.slice(start, start + CARD_MAX_NUMBERS),
            });
          continue;
        }
        yield* bucket(list, depth + 1, child);
      }
    };
    yield* bucket(group, FIRST_BUCKET_DIGITS, '');
  }
  yield;
  return cards.sort((a, b) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
}

function compareEntries(a: FeedEntry, b: FeedEntry): number {
  if (a.digits !== b.digits) return a.digits < b.digits ? -1 : 1;
  return Number(a.wildcard) - Number(b.wildcard);
}

/** The number as a phone book writes it: `+33612345678`, `+33162*`. */
export function telOf(entry: FeedEntry): string {
  return ruleSpelling(entry);
}
