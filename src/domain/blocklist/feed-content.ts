// What the blocklist feed holds (docs/integrations/blocklist-feed.md), as a pure function of its
// inputs: the operator's rules in force, ARCEP's NPV ranges when VERDICT_NPV=block, and the
// numbers looked up here whose verdict was block. Ranked in that order and capped; nothing the
// allow list covers is ever included, and a wildcard that would cover an allowed number is split
// into the smaller ranges around it. Then grouped into cards of at most 9 numbers (the Fritz!Box
// limit per phone-book entry) by prefix buckets, so a card's identity depends on its own prefix,
// not on its neighbours (the bucketing PhoneBlock adopted for stable block ids).
import type { ListRule } from '../ports/operator-lists.js';

/** Why an entry is in the feed, in rank order. */
export type FeedSource = 'rule' | 'npv' | 'recent';

/** One number or range: `digits` are the E.164 digits without `+`; a wildcard covers every number starting with them. */
export interface FeedEntry {
  digits: string;
  wildcard: boolean;
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

export interface FeedInputs {
  rules: readonly ListRule[];
  /** E.164 prefixes (`+33162`) of the NPV ranges; empty unless VERDICT_NPV=block. */
  npvPrefixes: readonly string[];
  recent: readonly BlockedCaller[];
  maxEntries: number;
  /** The reasons' words. */
  wording: { rule: string; npv: string };
}

/** A rule as digits: `+33162*` → 33162 (wildcard), `+33612345678` → exact. */
interface RuleShape {
  digits: string;
  wildcard: boolean;
  list: ListRule['list'];
}

function shapeOf(rule: ListRule): RuleShape | undefined {
  const wildcard = rule.rule.endsWith('*');
  const digits = rule.rule.replace(/^\+/, '').replace(/\*$/, '');
  if (!/^\d{1,15}$/.test(digits)) return undefined;
  return { digits, wildcard, list: rule.list };
}

/**
 * The rule that decides for everything `digits` (wildcard or not) stands for, by the lists' own
 * rule: the longest rule covering it, allow winning at equal length. A wildcard rule covers what
 * starts with its digits; an exact rule covers only a non-wildcard entry of the same digits.
 */
export function decidingRule(digits: string, wildcard: boolean, rules: readonly RuleShape[]): RuleShape | undefined {
  let best: RuleShape | undefined;
  for (const rule of rules) {
    const covers = rule.wildcard ? digits.startsWith(rule.digits) : !wildcard && digits === rule.digits;
    if (!covers) continue;
    if (best === undefined || rule.digits.length > best.digits.length || (rule.digits.length === best.digits.length && rule.list === 'allow' && best.list !== 'allow')) best = rule;
  }
  return best;
}

/**
 * `prefix*` minus the allow rules strictly inside it: the ten one-digit-longer ranges at each
 * level down to each allowed rule, which itself is left out (an allowed exact number ends its
 * branch: numbers longer than a whole number are not worth a phone-book line).
 */
export function splitAround(prefix: string, allowedInside: readonly RuleShape[]): string[] {
  if (allowedInside.length === 0) return [prefix];
  if (allowedInside.some((rule) => rule.digits === prefix)) return [];
  const ranges: string[] = [];
  for (let digit = 0; digit <= 9; digit += 1) {
    const child = `${prefix}${digit}`;
    ranges.push(...splitAround(child, allowedInside.filter((rule) => rule.digits.startsWith(child))));
  }
  return ranges;
}

const DAY_MS = 86_400_000;

/** Recent callers, most recent day first, then highest score, then latest. */
export function rankRecent(recent: readonly BlockedCaller[]): BlockedCaller[] {
  return [...recent].sort((a, b) => {
    const dayA = Math.floor(a.atMs / DAY_MS);
    const dayB = Math.floor(b.atMs / DAY_MS);
    if (dayA !== dayB) return dayB - dayA;
    if ((a.score ?? 0) !== (b.score ?? 0)) return (b.score ?? 0) - (a.score ?? 0);
    if (a.atMs !== b.atMs) return b.atMs - a.atMs;
    return a.e164 < b.e164 ? -1 : a.e164 > b.e164 ? 1 : 0;
  });
}

/**
 * A computation cut into steps: each `yield` is a point where the caller may let the event loop
 * through (infra/blocklist/blocklist-feed.ts runs these in slices of a few milliseconds); run to
 * its end at once by `runToEnd`. The result is the same either way.
 */
export type Steps<T> = Generator<void, T, void>;

/** Work items (rules, ranges, numbers, buckets) between two yield points. */
const ITEMS_PER_STEP = 8;

/** Runs steps to their end without pausing. */
export function runToEnd<T>(steps: Steps<T>): T {
  let next = steps.next();
  while (next.done !== true) next = steps.next();
  return next.value;
}

/** The feed's entries, ranked and capped. */
export function buildFeedEntries(inputs: FeedInputs): FeedEntry[] {
  return runToEnd(feedEntrySteps(inputs));
}

/** `buildFeedEntries` as steps, so that a large feed is built without holding the loop. */
export function* feedEntrySteps(inputs: FeedInputs): Steps<FeedEntry[]> {
  let items = 0;
  const pause = (): boolean => (items += 1) % ITEMS_PER_STEP === 0;
  const shapes = inputs.rules.map((rule) => ({ rule, shape: shapeOf(rule) })).filter((item): item is { rule: ListRule; shape: RuleShape } => item.shape !== undefined);
  const allShapes = shapes.map((item) => item.shape);
  const allowShapes = allShapes.filter((shape) => shape.list === 'allow');
  const entries: FeedEntry[] = [];
  const wildcards: string[] = [];
  const exact = new Set<string>();
  const full = (): boolean => entries.length >= inputs.maxEntries;
  const coveredByWildcard = (digits: string): boolean => wildcards.some((prefix) => digits.startsWith(prefix));

  const addRange = (prefix: string, source: FeedSource, reason: string): void => {
    // Every allow rule inside the range that decides for itself (a longer block rule inside it
    // is listed on its own).
    const inside = allowShapes.filter((shape) => shape.digits.length > prefix.length && shape.digits.startsWith(prefix));
    for (const range of splitAround(prefix, inside)) {
      if (full()) return;
      if (coveredByWildcard(range)) continue;
      wildcards.push(range);
      entries.push({ digits: range, wildcard: true, source, reason });
    }
  };
  const addNumber = (digits: string, source: FeedSource, reason: string): void => {
    if (full() || exact.has(digits) || coveredByWildcard(digits)) return;
    exact.add(digits);
    entries.push({ digits, wildcard: false, source, reason });
  };

  // 1. The operator's block rules: ranges first (they may cover exact ones), then numbers; each
  //    group in the rules' own order (stable while the rules are).
  const blockRules = shapes.filter((item) => item.shape.list === 'block').sort((a, b) => (a.shape.digits < b.shape.digits ? -1 : a.shape.digits > b.shape.digits ? 1 : 0));
  for (const { rule, shape } of blockRules) {
    if (pause()) yield;
    if (decidingRule(shape.digits, shape.wildcard, allShapes)?.list !== 'block') continue;
    const reason = rule.label?.trim() || inputs.wording.rule;
    if (shape.wildcard) addRange(shape.digits, 'rule', reason);
  }
  for (const { rule, shape } of blockRules) {
    if (pause()) yield;
    if (shape.wildcard || decidingRule(shape.digits, false, allShapes)?.list !== 'block') continue;
    addNumber(shape.digits, 'rule', rule.label?.trim() || inputs.wording.rule);
  }
  // 2. NPV ranges, unless an allow rule decides for the whole range.
  for (const prefix of inputs.npvPrefixes) {
    if (pause()) yield;
    const digits = prefix.replace(/^\+/, '');
    if (decidingRule(digits, true, allShapes)?.list === 'allow') continue;
    addRange(digits, 'npv', inputs.wording.npv);
  }
  // 3. Numbers looked up here whose verdict was block, unless the allow list decides for them.
  const ranked = rankRecent(inputs.recent);
  yield;
  for (const caller of ranked) {
    if (full()) break;
    if (pause()) yield;
    const digits = caller.e164.replace(/^\+/, '');
    if (!/^\d{4,15}$/.test(digits) || decidingRule(digits, false, allShapes)?.list === 'allow') continue;
    addNumber(digits, 'recent', caller.reason);
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
        const child = member.digits.length >= depth ? member.digits.slice(0, depth) : `${member.digits}${member.wildcard ? 'w' : 'x'}`;
        const list = children.get(child);
        if (list === undefined) children.set(child, [member]);
        else list.push(member);
      }
      for (const [child, list] of [...children].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        // A bucket that cannot be split (entries all shorter than the depth) is cut in nines.
        if (list.length > CARD_MAX_NUMBERS && list.every((member) => member.digits.length < depth)) {
          const sorted = [...list].sort(compareEntries);
          for (let start = 0; start < sorted.length; start += CARD_MAX_NUMBERS) cards.push({ uid: `${key}-${child}-${start / CARD_MAX_NUMBERS}`, reason, entries: sorted.slice(start, start + CARD_MAX_NUMBERS) });
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
  return `+${entry.digits}${entry.wildcard ? '*' : ''}`;
}
