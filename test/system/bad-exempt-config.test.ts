// The built server refuses to start on a RATE_LIMIT_EXEMPT it cannot read, naming the variable
// and the entry, rather than running with a limit nobody chose.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { builtServerCommand } from '../../harness/servers.js';

describe('node dist/server.js with a bad RATE_LIMIT_EXEMPT', () => {
  it.each(['10.0.0.0/33', '192.0.2.1, 2001:db8::/129', '10.0.0'])(
    'stops at start on %j with a message naming the variable',
    async (value) => {
      const server = builtServerCommand();
      const child = spawn(server.command, server.args, {
        cwd: server.cwd,
        env: { ...process.env, PORT: '0', HOST: '127.0.0.1', RATE_LIMIT_EXEMPT: value },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      // 'close', not 'exit': the output asserted below may not all be read when the child exits.
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      expect(code).not.toBe(0);
      expect(output).toContain('RATE_LIMIT_EXEMPT');
      expect(output).not.toMatch(/Server listening/);
    },
  );
});
