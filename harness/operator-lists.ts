// A small in-memory OperatorLists (the port of src/domain/ports/operator-lists.ts) for tests of
// what reads the lists without a file or Redis store behind them. It holds the lists' own index
// (src/domain/lists/rule-index.ts), so it decides as the service does: no second copy of which
// rule wins.
import type { ListMatch, ListRule, OperatorLists } from '../src/domain/ports/operator-lists.js';
import { createRuleIndex } from '../src/domain/lists/rule-index.js';

export class InMemoryOperatorLists implements OperatorLists {
  private readonly held = createRuleIndex();

  constructor(rules: ReadonlyArray<Omit<ListRule, 'createdAt'> & { createdAt?: string }> = []) {
    for (const rule of rules) this.add(rule);
  }

  add(rule: Omit<ListRule, 'createdAt'> & { createdAt?: string }): void {
    this.held.set({ createdAt: '2026-01-01T00:00:00.000Z', ...rule });
  }

  remove(ruleText: string): void {
    this.held.delete(ruleText);
  }

  activeRules(now: number = Date.now()): readonly ListRule[] {
    return this.held.activeRules(now);
  }

  match(e164: string, now: number = Date.now()): ListMatch | null {
    return this.held.match(e164, now);
  }

  version(now: number = Date.now()): string {
    return this.held.version(now);
  }
}
