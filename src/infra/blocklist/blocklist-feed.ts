// The blocklist feed's content, built off the request path and held until it changes: a timer
// rebuilds it every `refreshIntervalMs` (and `refresh()` does on demand) from the operator's
// lists, the NPV ranges, the numbers reported as spam (docs/reports.md) and the blocked-callers
// record. A rebuild whose inputs are those of the held snapshot (the lists' and the reports'
// versions and the record's callers, read cheaply) stops there, so an
// idle feed costs one read of the record per interval; when the rebuilt cards are the same as
// the held ones, the held snapshot (and so the collection's ctag and every ETag) stays. Requests
// only read the snapshot; while rebuilds fail it is marked failing (`failing()`), and the routes
// answer 503 rather than serve it. A lookup is recorded only when its verdict is block and no
// allow rule decides for the number; a recorded number allowed since is forgotten at the next
// rebuild. Rules: docs/integrations/blocklist-feed.md.
import { createHash } from 'node:crypto';
import {
  cardSteps,
  feedEntrySteps,
  type BlockedCaller,
  type FeedCard,
  type FeedEntry,
  type FeedRuleIndex,
  type ReportedCaller,
} from '../../domain/blocklist/feed-content.js';
import type { CallerReports } from '../../domain/ports/caller-reports.js';
import { runToEnd, type Steps } from '../../domain/steps.js';
import { CSV_HEADER, renderCsv, renderCsvRows, renderVcard } from '../../domain/blocklist/feed-formats.js';
import type { BlockedCallerLog } from '../../domain/ports/blocked-callers.js';
import type { OperatorLists } from '../../domain/ports/operator-lists.js';
import {
  cidLineOf,
  reportCidLine,
  spamReportersOf,
  verdictOf,
  type TextFacts,
  type VerdictRule,
} from '../../domain/verdict.js';
import { computeScore } from '../../domain/score.js';
import { words } from '../../domain/wording/catalogue.js';
import { createSlicer, type Slicer } from '../runtime/event-loop-slices.js';

export const PRODUCT_ID = '-//phone-reputation//blocklist//FR';

/** One card as served: its file name in the address book, its ETag and its bytes. */
export interface FeedCardFile {
  uid: string;
  /** `<uid>.vcf`, the last segment of its href. */
  name: string;
  etag: string;
  vcard: string;
  bytes: Buffer;
}

export interface FeedFile {
  bytes: Buffer;
  etag: string;
}

export interface FeedSnapshot {
  /** Changes exactly when the content does (the cards' bytes). */
  ctag: string;
  cards: readonly FeedCardFile[];
  byName: ReadonlyMap<string, FeedCardFile>;
  entries: readonly FeedEntry[];
  vcf: FeedFile;
  csv: FeedFile;
}

/** Rebuilds failing since `sinceMs`, `count` in a row: the held snapshot may be stale. */
export interface FeedFailure {
  sinceMs: number;
  count: number;
}

export interface BlocklistFeed {
  /** The held content (empty until the first build). */
  snapshot(): FeedSnapshot;
  /**
   * Set while the last rebuild failed: the held snapshot may list what the lists now allow, so
   * the routes answer 503 rather than serve it (docs/integrations/blocklist-feed.md). Cleared by
   * the next rebuild that succeeds.
   */
  failing(): FeedFailure | undefined;
  /** Rebuilds now; resolves when the held snapshot is current. Never rejects. */
  refresh(): Promise<FeedSnapshot>;
  /** A lookup's outcome: recorded when its verdict is block and no allow rule decides for the number. Cheap, never throws. */
  recordLookup(this: void, e164: string, facts: TextFacts): void;
  /** Called with each new snapshot once it is held (the HTTP routes render their answers again). */
  onChange(listener: (snapshot: FeedSnapshot) => void): void;
  start(): void;
  stop(): void;
}

/**
 * The operator's lists as the feed reads them. A store (src/infra/lists/) also gives its index:
 * the feed then decides each entry on it (O(digits)) and reads its rules one at a time, with no
 * copy of them; without it, the rules in force are indexed again at each rebuild.
 */
export type FeedLists = OperatorLists & { index?: () => FeedRuleIndex };

export interface BlocklistFeedOptions {
  log: BlockedCallerLog;
  /** The operator's lists; absent = no lists. */
  lists?: FeedLists;
  /** What the deployment's reporters said: the numbers reported as spam are listed; absent = none. */
  reports?: CallerReports;
  /** E.164 prefixes of the NPV ranges (`+33162`). Listed only when the rule's npv is block. */
  npvPrefixes: readonly string[];
  /** E.164 prefixes of the call-centre operators' blocks (numbering plan's callCentrePrefixes). Listed only when the rule's callCentre is block. */
  callCentrePrefixes?: readonly string[];
  rule: VerdictRule;
  cidMaxLength: number;
  maxEntries: number;
  refreshIntervalMs?: number;
  now?: () => number;
  onError?: (error: unknown) => void;
}

export const DEFAULT_REFRESH_INTERVAL_MS = 10_000;
/** A rule's entry without a label says who blocked it, in the `/cid` line's words. */
const RULE_REASON = words('fr', 'cid.listBlock');

function shortHash(text: string, length = 16): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

function fileOf(text: string): FeedFile {
  return { bytes: Buffer.from(text, 'utf8'), etag: `"${shortHash(text, 24)}"` };
}

/** Each card's file and CSV rows, one card per step, and the collection's ctag (a hash of every card in order). */
function* cardFileSteps(
  cards: readonly FeedCard[],
): Steps<{ files: FeedCardFile[]; csvParts: string[]; ctag: string }> {
  const files: FeedCardFile[] = [];
  const csvParts: string[] = [`${CSV_HEADER}\n`];
  const whole = createHash('sha256');
  for (const card of cards) {
    const vcard = renderVcard(card, PRODUCT_ID);
    whole.update(vcard);
    files.push({
      uid: card.uid,
      name: `${card.uid}.vcf`,
      etag: `"${shortHash(vcard, 24)}"`,
      vcard,
      bytes: Buffer.from(vcard, 'utf8'),
    });
    csvParts.push(renderCsvRows(card));
    yield;
  }
  return { files, csvParts, ctag: whole.digest('hex').slice(0, 24) };
}

/**
 * The snapshot of these entries, built in slices by the rebuild's slicer (the event loop let
 * through between them), so that a rebuild never holds the loop for long whatever the feed's size.
 */
export async function buildSnapshot(
  entries: readonly FeedEntry[],
  slicer: Slicer = createSlicer(),
): Promise<FeedSnapshot> {
  const cards: FeedCard[] = await slicer.run(cardSteps(entries, (reason) => `pr-${shortHash(reason, 8)}`));
  const { files, csvParts, ctag } = await slicer.run(cardFileSteps(cards));
  // The whole files, each made in a slice of its own.
  await slicer.letThrough();
  const vcfBytes = Buffer.concat(files.map((file) => file.bytes));
  await slicer.letThrough();
  const csv = fileOf(csvParts.join(''));
  await slicer.letThrough();
  return {
    ctag,
    cards: files,
    byName: new Map(files.map((file) => [file.name, file])),
    entries,
    vcf: { bytes: vcfBytes, etag: `"${ctag}"` },
    csv,
  };
}

/**
 * What a rebuild's result depends on, as one short key: the lists' version at `nowMs` (which
 * changes with every write and every expiry passing) and every field of the record's callers
 * that the entries and their order are made from.
 */
export function feedInputsKey(listsVersion: string, recent: readonly BlockedCaller[], reportsVersion = ''): string {
  return runToEnd(feedInputsKeySteps(listsVersion, recent, reportsVersion));
}

/** feedInputsKey as steps, one per caller, so that a rebuild hashes its thousands of callers in slices. */
export function* feedInputsKeySteps(
  listsVersion: string,
  recent: readonly BlockedCaller[],
  reportsVersion = '',
): Steps<string> {
  const hash = createHash('sha256').update(listsVersion).update('\n').update(reportsVersion).update('\n');
  for (const caller of recent) {
    hash.update(`${caller.e164}\t${caller.score ?? ''}\t${caller.atMs}\t${caller.reason}\n`);
    yield;
  }
  return hash.digest('hex');
}

/** Lists that are an index themselves (a RuleIndex given as the lists, as tests and the bench do). */
function isRuleIndex(lists: FeedLists): lists is FeedLists & FeedRuleIndex {
  return (
    'decide' in lists && typeof lists.decide === 'function' && 'inForce' in lists && typeof lists.inForce === 'function'
  );
}

/** The recorded callers but those the lists allow, which are forgotten by the record; one caller per step. */
function* withoutAllowedSteps(
  recent: readonly BlockedCaller[],
  lists: OperatorLists | undefined,
  nowMs: number,
  log: BlockedCallerLog,
): Steps<BlockedCaller[]> {
  if (lists === undefined) return [...recent];
  const kept: BlockedCaller[] = [];
  for (const caller of recent) {
    if (lists.match(caller.e164, nowMs)?.list === 'allow') log.forget(caller.e164);
    else kept.push(caller);
    yield;
  }
  return kept;
}

/** The numbers reported as spam at `nowMs`, with their rank and reason; one number per step. */
function* reportedSteps(
  reports: CallerReports | undefined,
  nowMs: number,
  cidMaxLength: number,
): Steps<ReportedCaller[]> {
  const reported: ReportedCaller[] = [];
  if (reports === undefined) return reported;
  for (const { e164, evidence } of reports.reportedSpam(nowMs)) {
    const lastReportAtMs = Date.parse(evidence.lastReportAt);
    reported.push({
      e164,
      reporters: spamReportersOf(evidence),
      spamWeight: evidence.spam,
      lastReportAtMs: Number.isNaN(lastReportAtMs) ? 0 : lastReportAtMs,
      reason: reportCidLine(evidence, 'fr', cidMaxLength) ?? '',
    });
    yield;
  }
  return reported;
}

/** The empty feed, held until the first build. */
function emptySnapshot(): FeedSnapshot {
  const ctag = createHash('sha256').digest('hex').slice(0, 24);
  return {
    ctag,
    cards: [],
    byName: new Map(),
    entries: [],
    vcf: { bytes: Buffer.alloc(0), etag: `"${ctag}"` },
    csv: fileOf(renderCsv([])),
  };
}

export function createBlocklistFeed(options: BlocklistFeedOptions): BlocklistFeed {
  const now = options.now ?? Date.now;
  const npvPrefixes = options.rule.npv === 'block' ? options.npvPrefixes : [];
  const callCentrePrefixes = options.rule.callCentre === 'block' ? (options.callCentrePrefixes ?? []) : [];
  let held = emptySnapshot();
  /** The inputs `held` was built from; undefined until the first build. */
  let heldInputs: string | undefined;
  let running: Promise<FeedSnapshot> | undefined;
  let failure: FeedFailure | undefined;
  let timer: NodeJS.Timeout | undefined;
  const listeners: Array<(snapshot: FeedSnapshot) => void> = [];

  async function rebuild(): Promise<FeedSnapshot> {
    const nowMs = now();
    const lists = options.lists;
    const listed = await options.log.list(nowMs);
    // One slicer through every stage, so that their slices never add up (event-loop-slices.ts).
    const slicer = createSlicer();
    const inputs = await slicer.run(
      feedInputsKeySteps(lists?.version(nowMs) ?? '', listed, options.reports?.version(nowMs) ?? ''),
    );
    if (inputs === heldInputs) return held;
    const reported = await slicer.run(reportedSteps(options.reports, nowMs, options.cidMaxLength));
    // A recorded caller the lists now allow leaves the record (and so the feed) for good.
    const recent = await slicer.run(withoutAllowedSteps(listed, lists, nowMs, options.log));
    const entries = await slicer.run(
      feedEntrySteps({
        rules: lists === undefined ? [] : (lists.index?.() ?? (isRuleIndex(lists) ? lists : lists.activeRules(nowMs))),
        nowMs,
        npvPrefixes,
        callCentrePrefixes,
        reported,
        recent,
        maxEntries: options.maxEntries,
        wording: { rule: RULE_REASON, npv: words('fr', 'cid.npv'), callCentre: words('fr', 'cid.callCentre') },
      }),
    );
    const next = await buildSnapshot(entries, slicer);
    heldInputs = inputs;
    if (next.ctag !== held.ctag) {
      held = next;
      for (const listener of listeners) {
        try {
          listener(held);
        } catch (error) {
          options.onError?.(error);
        }
      }
    }
    return held;
  }

  function refresh(): Promise<FeedSnapshot> {
    // One build at a time; a caller during a build waits for it and then for one more, so what
    // it asked for after its own change is in.
    const previous = running ?? Promise.resolve(held);
    const next = previous.then(rebuild).then(
      (snapshot) => {
        failure = undefined;
        return snapshot;
      },
      (error: unknown) => {
        failure = { sinceMs: failure?.sinceMs ?? now(), count: (failure?.count ?? 0) + 1 };
        options.onError?.(error);
        return held;
      },
    );
    running = next;
    void next.finally(() => {
      if (running === next) running = undefined;
    });
    return next;
  }

  return {
    snapshot: () => held,
    failing: () => failure,
    refresh,
    recordLookup(e164, facts) {
      if (verdictOf(facts, options.rule) !== 'block') return;
      // The operator's allow list decides for it (a JSON answer still looks it up): never kept.
      if (options.lists?.match(e164, now())?.list === 'allow') return;
      options.log.record({
        e164,
        score: computeScore(facts.sources).score,
        reason: cidLineOf(facts, 'fr', options.cidMaxLength),
        atMs: now(),
      });
    },
    onChange(listener) {
      listeners.push(listener);
    },
    start() {
      if (timer !== undefined) return;
      void refresh();
      timer = setInterval(() => void refresh(), options.refreshIntervalMs ?? DEFAULT_REFRESH_INTERVAL_MS);
      timer.unref();
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    },
  };
}
