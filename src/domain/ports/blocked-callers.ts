// The feed's record of numbers looked up here whose verdict was block, by the clients whose
// lookups count (FEED_RECORD_FROM), and that no allow rule decides for (the caches key on a hash
// and cannot give numbers back). Kept in clear, bounded, each entry expiring after
// FEED_RETENTION_DAYS: personal data (docs/integrations/blocklist-feed.md). Memory per process, or
// Redis shared by every instance (src/infra/blocklist/).
import type { BlockedCaller } from '../blocklist/feed-content.js';

export interface BlockedCallerLog {
  /** Records (or refreshes) a caller; never rejects, never blocks the request. */
  record(caller: BlockedCaller): void;
  /** The callers recorded within the retention at `nowMs`, at most the log's bound, newest first. */
  list(nowMs: number): Promise<BlockedCaller[]>;
  /** Drops a number (one the allow list now decides for); never rejects. */
  forget(e164: string): void;
}
