// The feed's record of numbers looked up here whose verdict was block (the caches key on a hash
// and cannot give numbers back). Kept in clear, bounded, each entry expiring after
// FEED_RETENTION_DAYS: personal data (docs/integrations/blocklist-feed.md). Memory per process, or
// Redis shared by every instance (src/infra/blocklist/).
import type { BlockedCaller } from '../blocklist/feed-content.js';

export interface BlockedCallerLog {
  /** Records (or refreshes) a caller; never rejects, never blocks the request. */
  record(caller: BlockedCaller): void;
  /** The callers recorded within the retention at `nowMs`, at most the log's bound, newest first. */
  list(nowMs: number): Promise<BlockedCaller[]>;
}
