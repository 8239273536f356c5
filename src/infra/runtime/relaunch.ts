// Starts this Node script again in a child process with the Node arguments it needs from the
// start (the heap limit: heap-limit.ts), and stands in for it: the child shares stdin, stdout and
// stderr, receives the signals sent to this process, and its exit is this process's exit (the
// same code, or the same signal). Used by the launcher (src/start.ts) and `phone-rep serve`,
// which cannot set V8's limit for themselves once started.
import { spawn } from 'node:child_process';

const RELAYED_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** Runs `node <nodeArgs> <script> <args>` relayed as above; never returns (the process exits with the child). */
export function relaunch(nodeArgs: readonly string[], script: string, args: readonly string[]): void {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], { stdio: 'inherit' });
  // A signal sent to this process only (an orchestrator's SIGTERM to the container's first
  // process) reaches the server too. Ctrl-C in a terminal signals both: the server ignores the
  // second one while it shuts down (installShutdown, src/server.ts).
  const relay = (signal: NodeJS.Signals): void => void child.kill(signal);
  for (const signal of RELAYED_SIGNALS) process.on(signal, relay);
  child.once('error', (error) => {
    process.stderr.write(`could not start ${script}: ${error.message}\n`);
    process.exit(1);
  });
  child.once('exit', (code, signal) => {
    if (signal !== null) {
      // Dies of the same signal, as the child did.
      for (const relayed of RELAYED_SIGNALS) process.off(relayed, relay);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code ?? 1);
  });
}
