// The service with its real report stores, for the report routes' tests over real HTTP: the
// composition opens the lists file in a temporary directory of its own (LISTS_FILE), so the
// reporters' tokens (tokens.json) and votes (reports.jsonl) are the real file stores beside it,
// or, with REDIS_URL in `env`, the real Redis stores under its key prefix. Tokens are made and
// revoked through the service's own token store (what `phone-rep token` and the admin API use),
// and votes read back from its own report store.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { ReportVote } from '../src/domain/ports/caller-reports.js';
import type { ServiceOverrides } from '../src/composition.js';
import type { ReportStore } from '../src/infra/reports/report-store.js';
import type { TokenStore } from '../src/infra/reports/token-store.js';
import { startTestServer, type TestServer } from './servers.js';

export interface ReportingServer extends TestServer {
  /** The folder of the lists file, tokens.json and reports.jsonl. */
  dir: string;
  /** The service's token store. */
  tokens: TokenStore;
  /** The service's report store. */
  reports: ReportStore;
  /** A token in force (or expired, with `expiresAt` in the past): its secret and id. */
  createToken(label: string, options?: { expiresAt?: string }): Promise<{ secret: string; id: string }>;
  /** The votes held on `e164`, oldest first. */
  votesOn(e164: string): ReportVote[];
}

export async function startReportingServer(
  options: { env?: Record<string, string>; overrides?: ServiceOverrides; logger?: Logger; dir?: string } = {},
): Promise<ReportingServer> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'phone-rep-reporting-'));
  const server = await startTestServer({
    env: { LISTS_FILE: join(dir, 'lists.csv'), ...options.env },
    ...(options.overrides === undefined ? {} : { overrides: options.overrides }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  const { tokens, reports } = server.deps;
  return {
    ...server,
    dir,
    tokens,
    reports,
    async createToken(label, tokenOptions = {}) {
      const { expiresAt } = tokenOptions;
      // A token cannot be created already expired: one that expired is made as it was, a year before its expiry.
      const now = expiresAt === undefined ? Date.now() : Math.min(Date.now(), Date.parse(expiresAt) - 365 * 86_400_000);
      const created = await tokens.create({ label, ...(expiresAt === undefined ? {} : { expiresAt }) }, now);
      return { secret: created.secret, id: created.token.id };
    },
    votesOn: (e164) => reports.votes(e164),
  };
}
