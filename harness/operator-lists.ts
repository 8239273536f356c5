// A small in-memory OperatorLists (the port of src/domain/ports/operator-lists.ts) for tests of
// what reads the lists without a file or Redis store behind them. It follows the port's documented
// rule: the longest matching rule wins, allow at equal length; expired rules are out.
import type { ListMatch, ListRule, OperatorLists } from '../src/domain/ports/operator-lists.js';

export class InMemoryOperatorLists implements OperatorLists {
  private rules: ListRule[] = [];
  private changes = 0;

  constructor(rules: ReadonlyArray<Omit<ListRule, 'createdAt'> & { createdAt?: string }> = []) {
    for (const rule of rules) this.add(rule);
  }

  add(rule: Omit<ListRule, 'createdAt'> & { createdAt?: string }): void {
    this.rules.push({ createdAt: '2026-01-01T00:00:00.000Z', ...rule });
    this.changes += 1;
  }

  remove(ruleText: string): void {
    this.rules = this.rules.filter((rule) => rule.rule !== ruleText);
    this.changes += 1;
  }

  activeRules(now: number = Date.now()): readonly ListRule[] {
    return this.rules.filter((rule) => rule.expiresAt === undefined || Date.parse(rule.expiresAt) > now);
  }

  match(e164: string, now: number = Date.now()): ListMatch | null {
    let best: ListRule | undefined;
    for (const rule of this.activeRules(now)) {
      const prefix = rule.rule.endsWith('*') ? rule.rule.slice(0, -1) : undefined;
      const covers = prefix === undefined ? rule.rule === e164 : e164.startsWith(prefix);
      if (!covers) continue;
      const length = (prefix ?? rule.rule).length;
      const bestLength = best === undefined ? -1 : best.rule.replace(/\*$/, '').length;
      if (length > bestLength || (length === bestLength && rule.list === 'allow')) best = rule;
    }
    return best === undefined ? null : { list: best.list, rule: best.rule, label: best.label ?? null };
  }

  version(now: number = Date.now()): string {
    return `${this.changes}:${this.activeRules(now).length}`;
  }
}
