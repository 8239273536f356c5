// The log destination in batches: nothing is written before a batch fills (or is flushed), and
// what is written is every line, in order, byte for byte, whatever its characters.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOG_BATCH_BYTES, logDestination, type LogDestination } from './log-destination.js';

function flushed(destination: LogDestination): Promise<void> {
  return new Promise((resolve, reject) => destination.flush((error) => (error ? reject(error) : resolve())));
}

describe('logDestination (batched, into a file)', () => {
  let directory: string;
  let file: string;
  let fd: number;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'log-destination-'));
    file = join(directory, 'out.log');
    fd = openSync(file, 'a');
  });
  afterEach(() => {
    closeSync(fd);
    rmSync(directory, { recursive: true, force: true });
  });

  it('holds lines until flushed, then writes them all in order, multi-byte characters whole', async () => {
    const destination = logDestination({ fd, isTerminal: false, flushIntervalMs: 3_600_000 });
    const lines = ['{"msg":"appel reçu"}\n', '{"msg":"numéro 06 12 34 56 78 → bloqué"}\n', '{"msg":"😀 ok"}\n'];
    for (const line of lines) destination.write(line);
    expect(readFileSync(file, 'utf8')).toBe('');
    await flushed(destination);
    expect(readFileSync(file, 'utf8')).toBe(lines.join(''));
  });

  it('loses nothing across batches of LOG_BATCH_BYTES', async () => {
    const destination = logDestination({ fd, isTerminal: false, flushIntervalMs: 3_600_000 });
    const lines: string[] = [];
    // Lines of 102 bytes of UTF-8 (é is two), three batches' worth.
    for (let index = 0; lines.length * 102 < 3 * LOG_BATCH_BYTES; index += 1)
      lines.push(`{"n":${String(index).padStart(6, '0')},"msg":"${'é'.repeat(40)}"}\n`);
    for (const line of lines) destination.write(line);
    await flushed(destination);
    const written = readFileSync(file, 'utf8');
    expect(Buffer.byteLength(written)).toBe(Buffer.byteLength(lines.join('')));
    expect(written).toBe(lines.join(''));
  });

  it("carries pino's lines as pino made them", async () => {
    const destination = logDestination({ fd, isTerminal: false, flushIntervalMs: 3_600_000 });
    const logger = pino({ base: null, timestamp: false }, destination);
    logger.info({ route: '/api/phone/:number' }, 'requête traitée');
    logger.warn('second');
    await flushed(destination);
    const written = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(written).toEqual([
      { level: 30, route: '/api/phone/:number', msg: 'requête traitée' },
      { level: 40, msg: 'second' },
    ]);
  });
});
