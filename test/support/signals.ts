// What a signal keeps for the signals combined from it, for tests that a long-lived signal (the
// engine's `closing`, a caller's lifetime) is left as it was: its abort listeners, and the set of
// WeakRefs Node's AbortSignal.any() adds to it (a private symbol; 0 where there is none).
import { getEventListeners } from 'node:events';

export function heldBy(signal: AbortSignal): number {
  const symbol = Object.getOwnPropertySymbols(signal).find((each) => each.description === 'kDependantSignals');
  const dependants: unknown = symbol === undefined ? undefined : (signal as unknown as Record<symbol, unknown>)[symbol];
  // Node's own SafeSet, from its primordials: not `instanceof` the Set a test sees.
  const size =
    typeof dependants === 'object' && dependants !== null ? (dependants as { size?: unknown }).size : undefined;
  return getEventListeners(signal, 'abort').length + (typeof size === 'number' ? size : 0);
}
