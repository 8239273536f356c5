// The CLI's IO when it runs as a process: stdout, stderr and stdin, with the writes counted so
// that the process exits only once its output is written.
import type { CliIo } from './command.js';

/**
 * The process's own output, counted until written: stdout and stderr to a pipe are written
 * asynchronously, and `process.exit` drops what is still queued (an export to a slow reader was
 * cut short, exit 0). `written` resolves once every write so far has reached the OS, with
 * the first write error (EPIPE: the reader left) if any.
 */
const output = (() => {
  let pending = 0;
  let failed: NodeJS.ErrnoException | undefined;
  let waiters: Array<() => void> = [];
  const listening = new WeakSet<NodeJS.WriteStream>();
  const settle = (): void => {
    if (pending > 0) return;
    const done = waiters;
    waiters = [];
    for (const waiter of done) waiter();
  };
  return {
    write(stream: NodeJS.WriteStream, text: string): void {
      if (!listening.has(stream)) {
        listening.add(stream);
        // A reader that left (EPIPE) is a failed write, reported by the exit code, not a crash.
        stream.on('error', (error: Error) => {
          failed ??= error;
        });
      }
      if (failed?.code === 'EPIPE') return;
      pending += 1;
      stream.write(text, (error) => {
        if (error) failed ??= error;
        pending -= 1;
        settle();
      });
    },
    written(): Promise<NodeJS.ErrnoException | undefined> {
      return new Promise((resolve) => {
        waiters.push(() => resolve(failed));
        settle();
      });
    },
  };
})();

export const processIo: CliIo = {
  out: (line) => output.write(process.stdout, `${line}\n`),
  err: (line) => output.write(process.stderr, `${line}\n`),
  env: process.env,
  stdin: process.stdin,
  ...(process.stderr.isTTY ? { progress: (text: string) => output.write(process.stderr, text) } : {}),
};

/** Resolves once everything `processIo` was given so far is written, with the first write error if any. */
export const processOutputWritten = (): Promise<NodeJS.ErrnoException | undefined> => output.written();
