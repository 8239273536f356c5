// A child process's output as the tests read it (the built server, Kamailio, SIPp): all it has
// printed so far, and a promise that the text a test waits for has appeared.
import type { ChildProcess } from 'node:child_process';

export interface WatchedOutput {
  /** Everything the process printed so far, stdout and stderr together (for assertion messages). */
  output: () => string;
  /** Resolves once the process has printed (stdout or stderr) text matching the pattern. */
  printed: (pattern: RegExp) => Promise<void>;
}

/** Starts collecting the child's stdout and stderr; call it before the child can print. */
export function watchOutput(child: ChildProcess): WatchedOutput {
  let output = '';
  let watchers: Array<{ pattern: RegExp; resolve: () => void }> = [];
  const append = (chunk: Buffer): void => {
    output += chunk.toString();
    watchers = watchers.filter((watcher) => {
      if (!watcher.pattern.test(output)) return true;
      watcher.resolve();
      return false;
    });
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  return {
    output: () => output,
    printed: (pattern) =>
      pattern.test(output) ? Promise.resolve() : new Promise<void>((resolve) => watchers.push({ pattern, resolve })),
  };
}
