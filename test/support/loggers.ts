// A real pino logger writing into memory, for tests that read the log lines a server writes.
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

/** A pino logger writing into `lines`, counting the child loggers made from it. */
export function capturingLogger(level = 'info'): {
  logger: Logger;
  lines: Array<Record<string, unknown>>;
  raw: string[];
  children: () => number;
} {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  let children = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk
        .toString()
        .split('\n')
        .filter((text) => text !== '')) {
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      callback();
    },
  });
  const logger = pino({ level, base: { pid: 7 }, onChild: () => (children += 1) }, sink);
  return { logger, lines, raw, children: () => children };
}
