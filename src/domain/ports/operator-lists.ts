// The operator's own allow and block lists, as the rest of the service sees them: the phone routes
// ask `match()` before any upstream, the blocklist feed reads `activeRules()`. The file and Redis
// stores (src/infra/lists/) implement it; src/domain/lists/ holds the matching rules.

export type ListName = 'allow' | 'block';

/** The most digits a rule holds after its `+`: E.164's 15. */
export const MAX_RULE_DIGITS = 15;

/** One rule as stored and exported: an exact number (its e164) or a prefix ending in `*` (`+33162*`). */
export interface ListRule {
  rule: string;
  list: ListName;
  /** Shown on `/cid`; at most 60 characters, no control or dialplan-breaking character. */
  label?: string;
  /**
   * The label may be shown to anyone (`meta.list`, `/cid`); absent or false, only a PBX's exempt
   * address sees it, on `/verdict` and `/cid` (labels are often people's names). Kept only with a label.
   */
  labelPublic?: boolean;
  note?: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601; the rule no longer applies from then on. */
  expiresAt?: string;
}

/** What `meta.list` carries when a rule applies. */
export interface ListMatch {
  list: ListName;
  rule: string;
  label: string | null;
  /**
   * From `match()`: whether the label may be shown to anyone (the rule's labelPublic). The phone
   * routes hide a label that is not, and never send this member.
   */
  labelPublic?: boolean;
}

export interface OperatorLists {
  /**
   * The rule that applies to `e164` at `now` (longest match; `allow` wins at equal length), or
   * null: the lists' one decision for a number (RuleIndex.decide of its digits, src/domain/lists/rule-index.ts).
   */
  match(e164: string, now?: number): ListMatch | null;
  /** The rules in force at `now` (expired ones left out). */
  activeRules(now?: number): readonly ListRule[];
  /** Changes whenever the rules in force may have changed (a write, a reload, an expiry passing). */
  version(now?: number): string;
}
