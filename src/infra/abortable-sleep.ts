// Waiting that a signal can cut short: resolves true after `delayMs`, or false as soon as
// `signal` aborts (at once if it already has). Never rejects; leaves no timer or listener behind.
export function sleepUnlessAborted(delayMs: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, delayMs);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
