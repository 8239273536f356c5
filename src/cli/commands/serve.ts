// `phone-rep serve`: the HTTP server, as `npm start`, configured by environment variables only.
import { loadConfig } from '../../config/config.js';
import { defineCommand, UsageError } from '../command.js';

export const serveCommand = defineCommand({
  name: 'serve',
  usage: 'phone-rep serve',
  summary: ['start the HTTP server'],
  async run({ positionals }, { io, env }) {
    if (positionals.length > 0)
      throw new UsageError('serve takes no argument; configure it with environment variables');
    const config = loadConfig(env);
    // V8 takes the heap limit sized from CACHE_MAX_MB only at start: without one of the
    // operator's, the same command runs again in a child started with it (src/start.ts).
    const { heapLimitGiven, serverExecArgv } = await import('../../infra/runtime/heap-limit.js');
    const script = process.argv[1];
    if (!heapLimitGiven(process.execArgv, process.env.NODE_OPTIONS) && script !== undefined) {
      const { relaunch } = await import('../../infra/runtime/relaunch.js');
      relaunch(
        serverExecArgv(process.execArgv, process.env.NODE_OPTIONS, config.CACHE_MAX_MB),
        script,
        process.argv.slice(2),
      );
      // The process exits with the child.
      return new Promise<number>(() => {});
    }
    const { startServer, installShutdown } = await import('../../server.js');
    const { close, port } = await startServer(config);
    io.err(`listening on ${config.HOST}:${port}`);
    installShutdown(close, config.SHUTDOWN_GRACE_MS, (message) => io.err(message));
    // Runs until a signal: installShutdown exits the process.
    return new Promise<number>(() => {});
  },
});
