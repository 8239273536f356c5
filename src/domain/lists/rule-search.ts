// What an operator types in the console's search box (GET /admin/lists/search), as the index's
// query (rule-index.ts, `RuleIndex.search`): the text, case-insensitive, for labels and notes;
// and, when it is digits, the digits anywhere in a rule's, and its readings as a prefix the way
// a rule is read (`0162` is +33 162…, `0033 162` is +33 162…), so that a search in the national
// spelling finds the rules stored in E.164. Pure.
import type { ListName } from '../ports/operator-lists.js';
import type { RuleQuery } from './rule-index.js';
import { readRuleKey, type RuleContext } from './rules.js';

const SEPARATORS = /[\s.\-/()]/g;
const DIGITS = /^(?:\+|00)?\d+\*?$/;

/** The search's query for `q` (any text; empty matches every rule), `list`, and the page. */
export function ruleQueryOf(
  q: string,
  page: { list?: ListName; offset: number; limit: number },
  context: RuleContext,
): RuleQuery {
  const text = q.trim().toLowerCase();
  const query: RuleQuery = {
    offset: page.offset,
    limit: page.limit,
    ...(page.list === undefined ? {} : { list: page.list }),
  };
  if (text === '') return query;
  const compact = text.replace(SEPARATORS, '');
  if (!DIGITS.test(compact)) return { ...query, text };
  const written = compact.replace(/\*$/, '');
  const digits = written.replace(/^\+/, '');
  // A national or international spelling is also read as the prefix a rule written so would be.
  const key = written.startsWith('0') ? readRuleKey(`${written}*`, context, { force: true }) : undefined;
  return {
    ...query,
    text,
    digitsContain: [digits],
    ...(key?.ok === true && key.value.digits !== digits ? { digitsStart: [key.value.digits] } : {}),
  };
}
