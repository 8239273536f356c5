// `phone-rep list …`: the operator's allow and block lists from the command line, on the file
// (LISTS_FILE) or, with REDIS_URL, on Redis: the same store the service reads (docs/lists.md).
//   list add RULE --list allow|block [--label TEXT [--public-label]] [--note TEXT] [--expires ISO-8601] [--force]
//   list remove RULE
//   list show
//   list check NUMBER        which rule applies and why
//   list import FILE|-       CSV rule,list,label,note,expiresAt[,labelPublic]; all or nothing
//   list export              the rules in force, same CSV
// Exit codes: 0 done, 2 bad input (nothing changed), 1 the store could not be read or written.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { listsLocationOf, loadConfig } from '../config/config.js';
import { loadNumberingPlan } from '../infra/arcep/load-numbering-plan.js';
import { createPhoneNumberParser } from '../domain/numbering/parse-phone-number.js';
import { checkRule, spellingsToRemove, type RuleContext } from '../domain/lists/rules.js';
import { explainMatch } from '../domain/lists/rule-index.js';
import { EXPORT_COLUMNS, formatRuleLine, ListCsvError } from '../domain/lists/list-csv.js';
import { readListCsvInSlices, type ListStore } from '../infra/lists/list-store.js';
import { openListStore } from '../infra/lists/open-list-store.js';
import { ListsFileError } from '../infra/lists/file-list-store.js';
import { stripControls } from './sanitize.js';

export interface ListCommandIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: Record<string, string | undefined>;
  stdin?: AsyncIterable<Buffer | string>;
}

export const LIST_USAGE = `phone-rep list add RULE --list allow|block [--label TEXT [--public-label]] [--note TEXT] [--expires ISO-8601] [--force]
       phone-rep list remove RULE
       phone-rep list show
       phone-rep list check NUMBER
       phone-rep list import FILE|-
       phone-rep list export`;

class ListUsageError extends Error {}

async function readAll(stream: AsyncIterable<Buffer | string>): Promise<string> {
  const parts: string[] = [];
  for await (const chunk of stream) parts.push(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
  return parts.join('');
}

export function createListCommand(io: ListCommandIo, arcepDir: string): (args: string[]) => Promise<number> {
  return async (args) => {
    let parsed;
    try {
      parsed = parseArgs({
        args,
        allowPositionals: true,
        strict: true,
        options: { list: { type: 'string' }, label: { type: 'string' }, 'public-label': { type: 'boolean' }, note: { type: 'string' }, expires: { type: 'string' }, force: { type: 'boolean' } },
      });
    } catch (error) {
      io.err((error as Error).message);
      io.err(`usage: ${LIST_USAGE}`);
      return 2;
    }
    const [action, argument, ...extra] = parsed.positionals;
    const needsArgument = action === 'add' || action === 'remove' || action === 'check' || action === 'import';
    if (action === undefined || !['add', 'remove', 'show', 'check', 'import', 'export'].includes(action) || (needsArgument && argument === undefined) || extra.length > 0 || (!needsArgument && argument !== undefined)) {
      io.err(`usage: ${LIST_USAGE}`);
      return 2;
    }
    let config;
    try {
      config = loadConfig({ ARCEP_DATA_DIR: arcepDir, ...io.env });
    } catch (error) {
      io.err((error as Error).message);
      return 1;
    }
    const context: RuleContext = { parsePhoneNumber: createPhoneNumberParser(loadNumberingPlan(config.ARCEP_DATA_DIR, { foreignCarriers: false }), config.DEFAULT_REGION), defaultRegion: config.DEFAULT_REGION };
    let store: ListStore;
    try {
      store = await openListStore(listsLocationOf(config), { context, watch: false });
    } catch (error) {
      io.err(stripControls(error instanceof ListsFileError ? error.message : `the lists cannot be opened: ${(error as Error).message}`));
      return 1;
    }
    try {
      return await run(action, argument, parsed.values, store, context);
    } catch (error) {
      if (error instanceof ListUsageError) {
        io.err(stripControls(error.message));
        return 2;
      }
      io.err(stripControls(`phone-rep list: ${(error as Error).message}`));
      return 1;
    } finally {
      await store.close();
    }
  };

  async function run(action: string, argument: string | undefined, values: { list?: string; label?: string; 'public-label'?: boolean; note?: string; expires?: string; force?: boolean }, store: ListStore, context: RuleContext): Promise<number> {
    const where = `${store.kind === 'redis' ? 'Redis' : 'file'} ${store.location}`;
    switch (action) {
      case 'add': {
        if (values.list === undefined) throw new ListUsageError('--list allow|block is required');
        const checked = checkRule({ rule: argument ?? '', list: values.list, label: values.label, labelPublic: values['public-label'] === true, note: values.note, expiresAt: values.expires }, context, { nowMs: Date.now(), ...(values.force === true ? { force: true } : {}) });
        if (values['public-label'] === true && values.label === undefined) throw new ListUsageError('--public-label: it makes --label public, so give one');
        if (!checked.ok) throw new ListUsageError(`${checked.problem.field === 'expiresAt' ? '--expires' : checked.problem.field === 'rule' ? 'RULE' : `--${checked.problem.field}`}: ${checked.problem.reason}`);
        const { replaced } = await store.put(checked.value);
        io.out(`${replaced ? 'replaced' : 'added'}: ${checked.value.rule} ${checked.value.list}${checked.value.label === undefined ? '' : ` "${checked.value.label}"${checked.value.labelPublic === true ? ' (public)' : ''}`} (${where})`);
        return 0;
      }
      case 'remove': {
        const spellings = spellingsToRemove(argument ?? '', context);
        if (!spellings.ok) throw new ListUsageError(`RULE: ${spellings.problem.reason}`);
        for (const spelling of spellings.value) {
          if (await store.remove(spelling)) {
            io.out(`removed: ${spelling} (${where})`);
            return 0;
          }
        }
        io.err(`no rule ${spellings.value.join(' nor ')} (${where})`);
        return 2;
      }
      case 'show': {
        const now = Date.now();
        const rules = store.storedRules().sort((a, b) => a.rule.localeCompare(b.rule));
        for (const rule of rules) {
          const expired = rule.expiresAt !== undefined && Date.parse(rule.expiresAt) <= now;
          io.out(
            stripControls(
              [rule.rule, rule.list, rule.label === undefined ? '' : `"${rule.label}"${rule.labelPublic === true ? ' (public)' : ''}`, rule.expiresAt === undefined ? '' : `${expired ? 'expired' : 'expires'} ${rule.expiresAt}`, rule.note === undefined ? '' : `# ${rule.note}`]
                .filter((part) => part !== '')
                .join('  '),
            ),
          );
        }
        io.err(`${rules.length} rule${rules.length === 1 ? '' : 's'} (${where})`);
        return 0;
      }
      case 'check': {
        const parsed = context.parsePhoneNumber(argument ?? '');
        if (!parsed.ok) throw new ListUsageError(`NUMBER: not a number the service accepts (${parsed.reason})`);
        const now = Date.now();
        for (const line of explainMatch(parsed.value.e164, store.match(parsed.value.e164, now), store.index(), now)) io.out(stripControls(line));
        return 0;
      }
      case 'import': {
        const text = argument === '-' ? await readAll(io.stdin ?? process.stdin) : await readFile(argument ?? '', 'utf8');
        let rules;
        try {
          rules = await readListCsvInSlices(text, { context, nowMs: Date.now() });
        } catch (error) {
          if (error instanceof ListCsvError) throw new ListUsageError(`${argument === '-' ? 'stdin' : argument} ${error.message}; nothing was imported`);
          throw error;
        }
        const result = await store.importRules(rules);
        io.out(`imported ${rules.length} rules: ${result.added} added, ${result.replaced} replaced (${where})`);
        return 0;
      }
      case 'export': {
        io.out(EXPORT_COLUMNS.join(','));
        for (const rule of store.activeRules(Date.now())) io.out(formatRuleLine(rule, EXPORT_COLUMNS));
        return 0;
      }
      default:
        return 2;
    }
  }
}
