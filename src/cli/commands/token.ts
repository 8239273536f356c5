// `phone-rep token …`: the reporters' tokens (docs/reports.md, "Tokens") from the command line,
// in the store the service reads (the file beside the lists file, or Redis with REDIS_URL). A
// running service accepts a token created here within a second (it follows the store).
// `create` prints the secret once, on stdout alone (so `$(phone-rep token create …)` holds it);
// with `--spamblocker` it also prints SpamBlocker's Report API config with the token in its
// header, and the Instant Query config, both for PUBLIC_URL.
// Exit codes: 0 done, 2 bad input (nothing changed), 1 the store could not be read or written.
import { listsLocationOf, loadConfig } from '../../config/config.js';
import { inForce, isTokenId } from '../../domain/reports/tokens.js';
import type { ReporterToken } from '../../domain/ports/caller-reports.js';
import { openTokenStore, TokenInputError, TokensFileError, type TokenStore } from '../../infra/reports/token-store.js';
import { isLoopbackHost, spamBlockerQueryApi, spamBlockerReportApi } from '../../spamblocker-configs.js';
import { defineCommand, UsageError, type CliIo, type CommandArgs } from '../command.js';
import { stripControls } from '../sanitize.js';

const TOKEN_OPTIONS = {
  label: { type: 'string' },
  expires: { type: 'string' },
  spamblocker: { type: 'boolean' },
} as const;

type TokenValues = CommandArgs<typeof TOKEN_OPTIONS>['values'];

interface TokenScope {
  readonly io: CliIo;
  readonly store: TokenStore;
  /** The store as the output names it: `file <path>` or `Redis <key>`. */
  readonly where: string;
  readonly publicUrl: string | undefined;
}

interface TokenAction {
  readonly name: string;
  readonly argument?: string;
  readonly options?: string;
  /** Checks made before the store is opened (nothing is done when they fail). */
  check?(values: TokenValues, publicUrl: string | undefined): void;
  run(argument: string, values: TokenValues, scope: TokenScope): Promise<number>;
}

const refused = (message: string): UsageError => new UsageError(message, { showUsage: false });

const PUBLIC_URL_NEEDED =
  '--spamblocker: the configs need the address the phones reach this deployment at: set PUBLIC_URL (https://phones.example.org); no token was created';

/** One token as `token list` shows it: id, state, label, then its dates. */
function tokenLine(token: ReporterToken, now: number): string {
  const state = token.revokedAt !== undefined ? 'revoked' : inForce(token, now) ? 'in force' : 'expired';
  const parts = [
    token.id,
    state,
    JSON.stringify(token.label),
    `created ${token.createdAt}`,
    token.expiresAt === undefined ? '' : `expires ${token.expiresAt}`,
    token.lastUsedAt === undefined ? 'never used' : `last used ${token.lastUsedAt}`,
    token.revokedAt === undefined ? '' : `revoked ${token.revokedAt}`,
  ];
  return stripControls(parts.filter((part) => part !== '').join('  '));
}

const TOKEN_ACTIONS: readonly TokenAction[] = [
  {
    name: 'create',
    options: '--label LABEL [--expires DATE] [--spamblocker]',
    check(values, publicUrl) {
      if (values.label === undefined) throw refused('--label is required (what the token is for: "Kitchen phone")');
      if (values.spamblocker === true && publicUrl === undefined) throw refused(PUBLIC_URL_NEEDED);
    },
    async run(_argument, values, { io, store, where, publicUrl }) {
      let created;
      try {
        created = await store.create({
          label: values.label ?? '',
          ...(values.expires === undefined ? {} : { expiresAt: values.expires }),
        });
      } catch (error) {
        if (error instanceof TokenInputError)
          throw refused(
            `${error.problem.field === 'expiresAt' ? '--expires' : '--label'}: ${error.problem.reason}; no token was created`,
          );
        throw error;
      }
      const { secret, token } = created;
      io.out(secret);
      io.err(
        stripControls(
          `created ${token.id} ${JSON.stringify(token.label)}${token.expiresAt === undefined ? '' : `, expires ${token.expiresAt}`} (${where})`,
        ),
      );
      io.err('The token above is shown this once and will not be shown again: only its hash is kept.');
      if (values.spamblocker === true && publicUrl !== undefined) {
        const base = publicUrl.replace(/\/+$/, '');
        const loopback = isLoopbackHost(new URL(base).host);
        io.out('');
        io.out('SpamBlocker Report API config, with the token in its header (docs/integrations/spamblocker.md):');
        io.out(JSON.stringify(spamBlockerReportApi(base, secret)));
        io.out('');
        io.out('SpamBlocker Instant Query API config (docs/integrations/spamblocker.md):');
        io.out(JSON.stringify(spamBlockerQueryApi(base, loopback ? 'loopback' : undefined)));
        if (loopback)
          io.err(
            `PUBLIC_URL names a loopback address (${base}), which a phone cannot reach: set it to the address the phones use.`,
          );
      }
      return 0;
    },
  },
  {
    name: 'list',
    async run(_argument, _values, { io, store, where }) {
      const now = Date.now();
      const tokens = store.list();
      for (const token of tokens) io.out(tokenLine(token, now));
      io.err(`${tokens.length} token${tokens.length === 1 ? '' : 's'}, ${store.countInForce(now)} in force (${where})`);
      return 0;
    },
  },
  {
    name: 'revoke',
    argument: 'ID',
    async run(id, _values, { io, store, where }) {
      if (!isTokenId(id))
        throw refused(`ID: ${JSON.stringify(id)} is no token id (tok_ and 10 hex digits, as token list shows)`);
      if (!(await store.revoke(id))) {
        io.err(`no token ${id} (${where})`);
        return 2;
      }
      const token = store.list().find((listed) => listed.id === id);
      io.out(stripControls(`revoked: ${id}${token === undefined ? '' : ` ${JSON.stringify(token.label)}`} (${where})`));
      return 0;
    },
  },
];

const actionUsage = (action: TokenAction): string =>
  ['phone-rep token', action.name, action.argument, action.options].filter((part) => part !== undefined).join(' ');

export const tokenCommand = defineCommand({
  name: 'token',
  usage: TOKEN_ACTIONS.map(actionUsage).join('\n       '),
  summary: ["the reporters' tokens, one per phone or PBX (docs/reports.md)"],
  options: TOKEN_OPTIONS,
  async run({ values, positionals }, { io, env }) {
    const [name, argument, ...extra] = positionals;
    const action = TOKEN_ACTIONS.find((candidate) => candidate.name === name);
    if (action === undefined || extra.length > 0 || (action.argument === undefined) !== (argument === undefined))
      throw new UsageError();
    const config = loadConfig(env);
    action.check?.(values, config.PUBLIC_URL);
    let store: TokenStore;
    try {
      store = await openTokenStore(listsLocationOf(config), { watch: false });
    } catch (error) {
      io.err(
        stripControls(
          error instanceof TokensFileError
            ? error.message
            : `the tokens cannot be opened: ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
      return 1;
    }
    try {
      const where = `${store.kind === 'redis' ? 'Redis' : 'file'} ${store.location}`;
      return await action.run(argument ?? '', values, { io, store, where, publicUrl: config.PUBLIC_URL });
    } catch (error) {
      if (error instanceof UsageError) throw error;
      io.err(stripControls(`phone-rep token: ${error instanceof Error ? error.message : String(error)}`));
      return 1;
    } finally {
      await store.close();
    }
  },
});
