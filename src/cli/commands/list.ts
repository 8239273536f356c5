// `phone-rep list …`: the operator's allow and block lists from the command line, on the file
// (LISTS_FILE) or, with REDIS_URL, on Redis: the same store the service reads (docs/lists.md).
// Its actions are a table: the usage, the check of the arguments and the dispatch are read from it.
// Exit codes: 0 done, 2 bad input (nothing changed), 1 the store could not be read or written.
import { arcepLocationOf, listsLocationOf, loadConfig } from '../../config/config.js';
import { explainDecision } from '../../domain/lists/rule-index.js';
import { EXPORT_COLUMNS, formatRuleLine, ListCsvError } from '../../domain/lists/list-csv.js';
import { checkRule, spellingsToRemove, type RuleContext } from '../../domain/lists/rules.js';
import { createPhoneNumberParser } from '../../domain/numbering/parse-phone-number.js';
import { loadNumberingPlan, numberingDataInUse } from '../../infra/arcep/load-numbering-plan.js';
import { ListsFileError } from '../../infra/lists/file-list-store.js';
import { readListCsvInSlices, type ListStore } from '../../infra/lists/list-store.js';
import { openListStore } from '../../infra/lists/open-list-store.js';
import { defineCommand, readInput, UsageError, type CliIo, type CommandArgs } from '../command.js';
import { stripControls } from '../sanitize.js';
import { formerListsFileWarning } from '../../startup-line.js';

const LIST_OPTIONS = {
  list: { type: 'string' },
  label: { type: 'string' },
  'public-label': { type: 'boolean' },
  note: { type: 'string' },
  expires: { type: 'string' },
  force: { type: 'boolean' },
} as const;

type ListValues = CommandArgs<typeof LIST_OPTIONS>['values'];

/** What an action works on: the store opened for it, and how rules and numbers are read. */
export interface ListScope {
  readonly io: CliIo;
  readonly store: ListStore;
  readonly ruleContext: RuleContext;
  /** The store as the output names it: `file <path>` or `Redis <url>`. */
  readonly where: string;
}

interface ListAction {
  readonly name: string;
  /** The one argument the action takes, as the usage names it; an action without takes none. */
  readonly argument?: string;
  /** The options it reads, as the usage shows them. */
  readonly options?: string;
  run(argument: string, values: ListValues, scope: ListScope): Promise<number>;
}

/** A value refused on its own merits: exit 2, nothing changed, no usage (the command line's shape was right). */
const refused = (message: string): UsageError => new UsageError(message, { showUsage: false });

const LIST_ACTIONS: readonly ListAction[] = [
  {
    name: 'add',
    argument: 'RULE',
    options: '--list allow|block [--label TEXT [--public-label]] [--note TEXT] [--expires ISO-8601] [--force]',
    async run(rule, values, { io, store, ruleContext, where }) {
      if (values.list === undefined) throw refused('--list allow|block is required');
      const labelPublic = values['public-label'] === true;
      const checked = checkRule(
        { rule, list: values.list, label: values.label, labelPublic, note: values.note, expiresAt: values.expires },
        ruleContext,
        { nowMs: Date.now(), ...(values.force === true ? { force: true } : {}) },
      );
      if (labelPublic && values.label === undefined)
        throw refused('--public-label: it makes --label public, so give one');
      if (!checked.ok) {
        const { field, reason } = checked.problem;
        throw refused(`${field === 'expiresAt' ? '--expires' : field === 'rule' ? 'RULE' : `--${field}`}: ${reason}`);
      }
      const { replaced } = await store.put(checked.value);
      const { label } = checked.value;
      const shownLabel =
        label === undefined ? '' : ` "${label}"${checked.value.labelPublic === true ? ' (public)' : ''}`;
      io.out(`${replaced ? 'replaced' : 'added'}: ${checked.value.rule} ${checked.value.list}${shownLabel} (${where})`);
      return 0;
    },
  },
  {
    name: 'remove',
    argument: 'RULE',
    async run(rule, _values, { io, store, ruleContext, where }) {
      const spellings = spellingsToRemove(rule, ruleContext);
      if (!spellings.ok) throw refused(`RULE: ${spellings.problem.reason}`);
      for (const spelling of spellings.value) {
        if (await store.remove(spelling)) {
          io.out(`removed: ${spelling} (${where})`);
          return 0;
        }
      }
      io.err(`no rule ${spellings.value.join(' nor ')} (${where})`);
      return 2;
    },
  },
  {
    name: 'show',
    async run(_argument, _values, { io, store, where }) {
      const now = Date.now();
      const rules = store.storedRules().sort((a, b) => a.rule.localeCompare(b.rule));
      for (const rule of rules) {
        const expired = rule.expiresAt !== undefined && Date.parse(rule.expiresAt) <= now;
        const parts = [
          rule.rule,
          rule.list,
          rule.label === undefined ? '' : `"${rule.label}"${rule.labelPublic === true ? ' (public)' : ''}`,
          rule.expiresAt === undefined ? '' : `${expired ? 'expired' : 'expires'} ${rule.expiresAt}`,
          rule.note === undefined ? '' : `# ${rule.note}`,
        ];
        io.out(stripControls(parts.filter((part) => part !== '').join('  ')));
      }
      io.err(`${rules.length} rule${rules.length === 1 ? '' : 's'} (${where})`);
      return 0;
    },
  },
  {
    name: 'check',
    argument: 'NUMBER',
    async run(number, _values, { io, store, ruleContext }) {
      const parsed = ruleContext.parsePhoneNumber(number);
      if (!parsed.ok) throw refused(`NUMBER: not a number the service accepts (${parsed.reason})`);
      const now = Date.now();
      for (const line of explainDecision(parsed.value.e164, store.index(), now)) io.out(stripControls(line));
      return 0;
    },
  },
  {
    name: 'import',
    argument: 'FILE|-',
    async run(source, _values, { io, store, ruleContext, where }) {
      const text = await readInput(source, io);
      let rules;
      try {
        rules = await readListCsvInSlices(text, { context: ruleContext, nowMs: Date.now() });
      } catch (error) {
        if (error instanceof ListCsvError)
          throw refused(`${source === '-' ? 'stdin' : source} ${error.message}; nothing was imported`);
        throw error;
      }
      const result = await store.importRules(rules);
      io.out(`imported ${rules.length} rules: ${result.added} added, ${result.replaced} replaced (${where})`);
      return 0;
    },
  },
  {
    name: 'export',
    async run(_argument, _values, { io, store }) {
      io.out(EXPORT_COLUMNS.join(','));
      for (const rule of store.activeRules(Date.now())) io.out(formatRuleLine(rule, EXPORT_COLUMNS));
      return 0;
    },
  },
];

const actionUsage = (action: ListAction): string =>
  ['phone-rep list', action.name, action.argument, action.options].filter((part) => part !== undefined).join(' ');

export const listCommand = defineCommand({
  name: 'list',
  // One line an action, aligned under the first after `usage: `.
  usage: LIST_ACTIONS.map(actionUsage).join('\n       '),
  summary: ["the operator's allow and block lists (docs/lists.md)"],
  options: LIST_OPTIONS,
  run({ values, positionals }, { io, env }) {
    const [name, argument, ...extra] = positionals;
    const action = LIST_ACTIONS.find((candidate) => candidate.name === name);
    if (action === undefined || extra.length > 0 || (action.argument === undefined) !== (argument === undefined))
      throw new UsageError();
    return withListStore('list', env, io, (scope) => action.run(argument ?? '', values, scope));
  },
});

/**
 * Opens the store the configuration names (the file, or Redis with REDIS_URL), as the service
 * does, runs `use` on it and closes it. A store that cannot be opened, or that fails, is exit 1
 * with the message, prefixed with the command's name; a UsageError goes on to runCommand.
 */
export async function withListStore(
  command: string,
  env: Record<string, string | undefined>,
  io: CliIo,
  use: (scope: ListScope) => Promise<number>,
): Promise<number> {
  const config = loadConfig(env);
  // Rules left at LISTS_FILE's former default would not be the ones edited here.
  const formerLists = formerListsFileWarning(config, { env });
  if (formerLists !== undefined) io.err(`phone-rep: ${formerLists}`);
  const ruleContext: RuleContext = {
    parsePhoneNumber: createPhoneNumberParser(
      loadNumberingPlan(numberingDataInUse(arcepLocationOf(config)).dir, { foreignCarriers: false }),
      config.DEFAULT_REGION,
    ),
    defaultRegion: config.DEFAULT_REGION,
  };
  let store: ListStore;
  try {
    store = await openListStore(listsLocationOf(config), { context: ruleContext, watch: false });
  } catch (error) {
    io.err(
      stripControls(
        error instanceof ListsFileError
          ? error.message
          : `the lists cannot be opened: ${error instanceof Error ? error.message : String(error)}`,
      ),
    );
    return 1;
  }
  try {
    const where = `${store.kind === 'redis' ? 'Redis' : 'file'} ${store.location}`;
    return await use({ io, store, ruleContext, where });
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // The store failed: named as the command's, exit 1.
    io.err(stripControls(`phone-rep ${command}: ${error instanceof Error ? error.message : String(error)}`));
    return 1;
  } finally {
    await store.close();
  }
}
