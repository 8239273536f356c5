// Test support for the report stores: awaiting a store's change event until a condition holds
// (no sleep: the store says when it changed).

export interface ChangeEvents {
  /** The store's `onChange`. */
  onChange: () => void;
  /** Resolves once `condition` holds, checked now and at every change event. */
  until(condition: () => boolean): Promise<void>;
}

export function changeEvents(): ChangeEvents {
  const waiting = new Set<() => void>();
  return {
    onChange: () => {
      for (const check of [...waiting]) check();
    },
    until(condition) {
      return new Promise((resolve) => {
        const check = (): void => {
          if (!condition()) return;
          waiting.delete(check);
          resolve();
        };
        waiting.add(check);
        check();
      });
    },
  };
}
