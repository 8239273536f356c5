// Small in-memory implementations of the two ports the report routes take (ReporterTokens,
// ReportRecorder in src/domain/ports/caller-reports.ts), for tests of the routes over real HTTP.
// The real stores (src/infra/reports/, file or Redis) replace them where they exist; these keep
// the ports' contract: tokens compared by SHA-256 of the secret, refused once expired or revoked;
// one vote per token and number, the latest replacing the earlier; at most `maxPerTokenDay`
// votes per token and UTC day, then a refusal with the seconds left until midnight UTC.
import { createHash, randomBytes } from 'node:crypto';
import {
  ReportStoreUnavailable,
  type RecordOutcome,
  type ReporterToken,
  type ReporterTokens,
  type ReportRecorder,
  type ReportVote,
} from '../src/domain/ports/caller-reports.js';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
const DAY_MS = 86_400_000;

export interface MemoryReporterTokens extends ReporterTokens {
  /** A new token in force; its secret (shown once, as `phone-rep token create` does). */
  create(label: string, options?: { expiresAt?: string; now?: number }): { secret: string; token: ReporterToken };
  revoke(id: string, now?: number): void;
  list(): ReporterToken[];
}

export function memoryReporterTokens(clock: () => number = Date.now): MemoryReporterTokens {
  const byHash = new Map<string, ReporterToken>();
  const inForce = (token: ReporterToken, at: number): boolean =>
    token.revokedAt === undefined && (token.expiresAt === undefined || Date.parse(token.expiresAt) > at);
  return {
    anyInForce(now = clock()) {
      return [...byHash.values()].some((token) => inForce(token, now));
    },
    async authenticate(secret, now = clock()) {
      const token = byHash.get(sha256(secret));
      if (token === undefined || !inForce(token, now)) return null;
      token.lastUsedAt = new Date(Math.floor(now / 3_600_000) * 3_600_000).toISOString();
      return { ...token };
    },
    create(label, options = {}) {
      const secret = `prt_${randomBytes(32).toString('base64url')}`;
      const token: ReporterToken = {
        id: `tok_${randomBytes(5).toString('hex')}`,
        label,
        createdAt: new Date(options.now ?? clock()).toISOString(),
        ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
      };
      byHash.set(sha256(secret), token);
      return { secret, token: { ...token } };
    },
    revoke(id, now = clock()) {
      for (const token of byHash.values()) if (token.id === id) token.revokedAt = new Date(now).toISOString();
    },
    list() {
      return [...byHash.values()].map((token) => ({ ...token }));
    },
  };
}

export interface MemoryReportRecorder extends ReportRecorder {
  /** Every vote in force, oldest first. */
  votes(): ReportVote[];
  /** While set, `record` throws ReportStoreUnavailable (the store down). */
  failing: boolean;
}

export function memoryReportRecorder(
  options: { maxPerTokenDay?: number; clock?: () => number } = {},
): MemoryReportRecorder {
  const maxPerTokenDay = options.maxPerTokenDay ?? 100;
  const clock = options.clock ?? Date.now;
  const votes = new Map<string, ReportVote>();
  const perTokenDay = new Map<string, number>();
  const recorder: MemoryReportRecorder = {
    failing: false,
    async record(vote, now = clock()): Promise<RecordOutcome> {
      if (recorder.failing) throw new ReportStoreUnavailable('the reports store is down (test)');
      const day = Math.floor(now / DAY_MS);
      const dayKey = `${vote.tokenId} ${day}`;
      const used = perTokenDay.get(dayKey) ?? 0;
      if (used >= maxPerTokenDay)
        return { ok: false, reason: 'token_day_cap', retryAfterSeconds: Math.ceil(((day + 1) * DAY_MS - now) / 1000) };
      perTokenDay.set(dayKey, used + 1);
      const key = `${vote.e164} ${vote.tokenId}`;
      const replaced = votes.delete(key);
      votes.set(key, { ...vote });
      return { ok: true, replaced };
    },
    votes: () => [...votes.values()].map((vote) => ({ ...vote })),
  };
  return recorder;
}
