// The backup file (`phone-rep backup`, `phone-rep restore`): everything of record the service
// holds, in one JSON document that a person can read and diff (docs/operations.md, "Back up").
//
//   { "format": "phone-reputation-backup", "version": 1, "createdAt": "<ISO 8601>",
//     "lists": { "rules": [ { "rule": "+33162*", "list": "block", … }, … ] } }
//
// One rule a line, with the fields the stores keep (ListRule). Each kind of data is a section
// of its own beside `lists`: the reporters' tokens (hashed) and their reports will be two more,
// in this same format and version. A reader restores every section it knows, leaves out of the
// restore what a file does not hold (a backup made before a section existed), and refuses a
// file holding a section or a field it does not know: restoring part of a file and calling it
// done would look like a clean result. Pure: reading and writing the file is the CLI's.
import type { ListRule } from '../ports/operator-lists.js';
import { checkRuleFields } from '../lists/rules.js';
import { isRuleSpelling } from '../lists/rule-key.js';

export const BACKUP_FORMAT = 'phone-reputation-backup';
export const BACKUP_VERSION = 1;

/** The sections this version writes and restores. */
const SECTIONS = new Set(['lists']);
const TOP_LEVEL = new Set(['format', 'version', 'createdAt', ...SECTIONS]);
const RULE_FIELDS = new Set(['rule', 'list', 'label', 'labelPublic', 'note', 'createdAt', 'expiresAt']);
const STRING_FIELDS = ['label', 'note', 'createdAt', 'expiresAt'] as const;

export interface Backup {
  createdAt: string;
  /** The operator's allow and block lists: every rule held, expired ones included. */
  lists: { rules: ListRule[] };
}

/** A file that is not a backup this version can restore, and why (nothing was changed). */
export class BackupFileError extends Error {
  override name = 'BackupFileError';
}

/** One rule as a JSON object, its fields in a fixed order (a backup diffs line by line). */
function ruleJson(rule: ListRule): string {
  return JSON.stringify({
    rule: rule.rule,
    list: rule.list,
    ...(rule.label === undefined ? {} : { label: rule.label }),
    ...(rule.labelPublic === true ? { labelPublic: true } : {}),
    ...(rule.note === undefined ? {} : { note: rule.note }),
    createdAt: rule.createdAt,
    ...(rule.expiresAt === undefined ? {} : { expiresAt: rule.expiresAt }),
  });
}

/** The backup's text, as lines (one rule a line); written with a newline after each. */
export function formatBackupLines(backup: Backup): string[] {
  const rules = backup.lists.rules.map(
    (rule, at) => `      ${ruleJson(rule)}${at + 1 < backup.lists.rules.length ? ',' : ''}`,
  );
  return [
    '{',
    `  "format": ${JSON.stringify(BACKUP_FORMAT)},`,
    `  "version": ${BACKUP_VERSION},`,
    `  "createdAt": ${JSON.stringify(backup.createdAt)},`,
    '  "lists": {',
    rules.length === 0 ? '    "rules": []' : '    "rules": [',
    ...rules,
    ...(rules.length === 0 ? [] : ['    ]']),
    '  }',
    '}',
  ];
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function readRule(value: unknown, at: number): ListRule {
  const where = `lists.rules[${at}]`;
  if (!isObject(value)) throw new BackupFileError(`${where} is not an object`);
  const unknown = Object.keys(value).find((key) => !RULE_FIELDS.has(key));
  if (unknown !== undefined)
    throw new BackupFileError(
      `${where} has a field this version does not know, ${JSON.stringify(unknown)}: restore it with the version that made it`,
    );
  const { rule, list, labelPublic } = value;
  if (typeof rule !== 'string' || !isRuleSpelling(rule))
    throw new BackupFileError(`${where}.rule is not a stored rule (+digits, or +digits*)`);
  for (const field of STRING_FIELDS) {
    if (value[field] !== undefined && typeof value[field] !== 'string')
      throw new BackupFileError(`${where}.${field} is not a string`);
  }
  if (labelPublic !== undefined && typeof labelPublic !== 'boolean')
    throw new BackupFileError(`${where}.labelPublic is not true or false`);
  if (value.createdAt === undefined) throw new BackupFileError(`${where}.createdAt is missing`);
  const checked = checkRuleFields({
    rule,
    list,
    label: value.label as string | undefined,
    labelPublic,
    note: value.note as string | undefined,
    expiresAt: value.expiresAt as string | undefined,
    createdAt: value.createdAt as string,
  });
  if (!checked.ok) throw new BackupFileError(`${where} (${rule}) ${checked.problem.field}: ${checked.problem.reason}`);
  return checked.value;
}

/**
 * A backup file's text, checked whole before anything is restored: its format and version, its
 * sections, and every rule (as the stores check a rule read from their own file: an expired
 * rule is kept). Throws BackupFileError saying what is wrong.
 */
export function readBackup(text: string, options: { maxRules?: number } = {}): Backup {
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\ufeff/, ''));
  } catch {
    throw new BackupFileError(`not a ${BACKUP_FORMAT} file (it is not JSON)`);
  }
  if (!isObject(value) || value.format !== BACKUP_FORMAT) {
    const format =
      isObject(value) && typeof value.format === 'string'
        ? ` (its format is ${JSON.stringify(value.format.slice(0, 60))})`
        : '';
    throw new BackupFileError(`not a ${BACKUP_FORMAT} file${format}`);
  }
  if (value.version !== BACKUP_VERSION) {
    throw new BackupFileError(
      `a ${BACKUP_FORMAT} file of version ${JSON.stringify(value.version)}; this phone-rep restores version ${BACKUP_VERSION} only`,
    );
  }
  const unknown = Object.keys(value).find((key) => !TOP_LEVEL.has(key));
  if (unknown !== undefined)
    throw new BackupFileError(
      `the file holds a section this version does not know, ${JSON.stringify(unknown)}: restore it with the version that made it`,
    );
  if (typeof value.createdAt !== 'string') throw new BackupFileError('createdAt is missing');
  const lists = value.lists;
  if (!isObject(lists) || !Array.isArray(lists.rules))
    throw new BackupFileError('lists.rules is missing or not an array');
  const extra = Object.keys(lists).find((key) => key !== 'rules');
  if (extra !== undefined)
    throw new BackupFileError(`lists has a field this version does not know, ${JSON.stringify(extra)}`);
  if (options.maxRules !== undefined && lists.rules.length > options.maxRules) {
    throw new BackupFileError(
      `lists.rules holds ${lists.rules.length} rules; the lists hold at most ${options.maxRules}`,
    );
  }
  const seen = new Set<string>();
  const rules = lists.rules.map((rule: unknown, at) => {
    const read = readRule(rule, at);
    if (seen.has(read.rule)) throw new BackupFileError(`lists.rules[${at}] (${read.rule}) appears twice`);
    seen.add(read.rule);
    return read;
  });
  return { createdAt: value.createdAt, lists: { rules } };
}
