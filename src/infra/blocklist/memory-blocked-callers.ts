// The blocked-callers record in this process: a Map in recording order (a caller recorded again
// moves to the end), the oldest dropped past `maxEntries`, expired ones left out when listed.
import type { BlockedCaller } from '../../domain/blocklist/feed-content.js';
import type { BlockedCallerLog } from '../../domain/ports/blocked-callers.js';

export interface MemoryBlockedCallerLog extends BlockedCallerLog {
  size(): number;
}

export function createMemoryBlockedCallerLog(options: {
  maxEntries: number;
  retentionMs: number;
}): MemoryBlockedCallerLog {
  const callers = new Map<string, BlockedCaller>();
  return {
    record(caller) {
      callers.delete(caller.e164);
      callers.set(caller.e164, caller);
      while (callers.size > options.maxEntries) {
        const oldest = callers.keys().next();
        if (oldest.done === true) break;
        callers.delete(oldest.value);
      }
    },
    async list(nowMs) {
      const since = nowMs - options.retentionMs;
      const listed: BlockedCaller[] = [];
      for (const [e164, caller] of callers) {
        if (caller.atMs <= since) callers.delete(e164);
        else listed.push(caller);
      }
      return listed.reverse();
    },
    forget(e164) {
      callers.delete(e164);
    },
    size: () => callers.size,
  };
}
