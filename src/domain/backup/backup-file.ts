// The backup file (`phone-rep backup`, `phone-rep restore`): everything of record the service
// holds, in one JSON document that a person can read and diff (docs/operations.md, "Back up").
//
//   { "format": "phone-reputation-backup", "version": 3, "createdAt": "<ISO 8601>",
//     "lists": { "rules": [ { "rule": "+33162*", "list": "block", … }, … ] },
//     "tokens": [ { "id": "tok_…", "label": "Kitchen phone", "createdAt": "…", …, "hash": "<sha-256 hex>" }, … ],
//     "reports": [ { "e164": "+33612345678", "tokenId": "tok_…", "rating": "fraud", "at": "<ISO 8601>", "comment"? }, … ],
//     "dismissals": [ { "e164": "+33612345678", "at": "<ISO 8601>" }, … ] }
//
// One rule, token, vote or dismissal a line, with the fields the stores keep (ListRule,
// StoredToken, ReportVote with its time in ISO 8601, the operator's dismissal of a reported
// number with its time). A token is kept with its hash, never a secret: restored, it works again
// for the phone that holds the secret. Older versions are still read, and their restore leaves
// the sections they lack alone: version 1 (before the reporters' tokens and reports) holds
// `lists` alone; version 2 (before the dismissals) holds no `dismissals`. A reader restores every
// section a file holds, and refuses a file holding a section or a field it does not know:
// restoring part of a file and calling it done would look like a clean result. Pure: reading and
// writing the file is the CLI's.
import { REPORT_RATINGS, type ReportVote } from '../ports/caller-reports.js';
import type { ListRule } from '../ports/operator-lists.js';
import { checkRuleFields } from '../lists/rules.js';
import { isRuleSpelling } from '../lists/rule-key.js';
import { isTokenId, readStoredToken, type StoredToken } from '../reports/tokens.js';
import { COMMENT_MAX_LENGTH } from '../reports/comment.js';

export const BACKUP_FORMAT = 'phone-reputation-backup';
/** The version written; every version in READABLE_VERSIONS is restored. */
export const BACKUP_VERSION = 3;
/** The sections of each version's files (version 1: the lists alone; version 2: no dismissals). */
const SECTIONS_OF_VERSION: ReadonlyMap<unknown, ReadonlySet<string>> = new Map([
  [1, new Set(['lists'])],
  [2, new Set(['lists', 'tokens', 'reports'])],
  [3, new Set(['lists', 'tokens', 'reports', 'dismissals'])],
]);
const RULE_FIELDS = new Set(['rule', 'list', 'label', 'labelPublic', 'note', 'createdAt', 'expiresAt']);
const STRING_FIELDS = ['label', 'note', 'createdAt', 'expiresAt'] as const;
const TOKEN_FIELDS = new Set(['id', 'label', 'createdAt', 'expiresAt', 'lastUsedAt', 'revokedAt', 'hash']);
const VOTE_FIELDS = new Set(['e164', 'tokenId', 'rating', 'at', 'comment']);
const DISMISSAL_FIELDS = new Set(['e164', 'at']);
const RATINGS: ReadonlySet<string> = new Set(REPORT_RATINGS);
const E164 = /^\+[1-9][0-9]{1,14}$/;

export interface Backup {
  createdAt: string;
  /** The operator's allow and block lists: every rule held, expired ones included. */
  lists: { rules: ListRule[] };
  /** The reporters' tokens, revoked and expired ones included, each with its hash; absent from a version 1 file. */
  tokens?: StoredToken[];
  /** The reporters' votes held; absent from a version 1 file. */
  reports?: ReportVote[];
  /** The operator's dismissals in force; absent from a file of version 1 or 2. */
  dismissals?: Dismissal[];
}

/** The operator took `e164` out of the review at `at` (ms). */
export interface Dismissal {
  e164: string;
  at: number;
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

function tokenJson(token: StoredToken): string {
  return JSON.stringify({
    id: token.id,
    label: token.label,
    createdAt: token.createdAt,
    ...(token.expiresAt === undefined ? {} : { expiresAt: token.expiresAt }),
    ...(token.lastUsedAt === undefined ? {} : { lastUsedAt: token.lastUsedAt }),
    ...(token.revokedAt === undefined ? {} : { revokedAt: token.revokedAt }),
    hash: token.hash,
  });
}

function voteJson(vote: ReportVote): string {
  return JSON.stringify({
    e164: vote.e164,
    tokenId: vote.tokenId,
    rating: vote.rating,
    at: new Date(vote.at).toISOString(),
    ...(vote.comment === undefined ? {} : { comment: vote.comment }),
  });
}

function dismissalJson(dismissal: Dismissal): string {
  return JSON.stringify({ e164: dismissal.e164, at: new Date(dismissal.at).toISOString() });
}

/** `name: [` … `]` with one item a line at `indent`, or `name: []`. */
function arrayLines(name: string, items: string[], indent: string, last: boolean): string[] {
  const end = last ? '' : ',';
  if (items.length === 0) return [`${indent}${JSON.stringify(name)}: []${end}`];
  return [
    `${indent}${JSON.stringify(name)}: [`,
    ...items.map((item, at) => `${indent}  ${item}${at + 1 < items.length ? ',' : ''}`),
    `${indent}]${end}`,
  ];
}

/** The backup's text (version 3), as lines (one rule, token, vote or dismissal a line); written with a newline after each. */
export function formatBackupLines(backup: Backup): string[] {
  return [
    '{',
    `  "format": ${JSON.stringify(BACKUP_FORMAT)},`,
    `  "version": ${BACKUP_VERSION},`,
    `  "createdAt": ${JSON.stringify(backup.createdAt)},`,
    '  "lists": {',
    ...arrayLines('rules', backup.lists.rules.map(ruleJson), '    ', true),
    '  },',
    ...arrayLines('tokens', (backup.tokens ?? []).map(tokenJson), '  ', false),
    ...arrayLines('reports', (backup.reports ?? []).map(voteJson), '  ', false),
    ...arrayLines('dismissals', (backup.dismissals ?? []).map(dismissalJson), '  ', true),
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

function refuseUnknownField(value: Record<string, unknown>, known: ReadonlySet<string>, where: string): void {
  const unknown = Object.keys(value).find((key) => !known.has(key));
  if (unknown !== undefined)
    throw new BackupFileError(
      `${where} has a field this version does not know, ${JSON.stringify(unknown)}: restore it with the version that made it`,
    );
}

/**
 * One section of entries: an array of objects with only `fields`, each read by `read`, which
 * returns the entry and the key no two entries may share (`twice` says what that means).
 */
function readSection<T>(
  value: unknown,
  name: string,
  fields: ReadonlySet<string>,
  read: (entry: Record<string, unknown>, where: string) => { item: T; key: string; twice: string },
): T[] {
  if (!Array.isArray(value)) throw new BackupFileError(`${name} is not an array`);
  const seen = new Set<string>();
  return value.map((entry: unknown, at) => {
    const where = `${name}[${at}]`;
    if (!isObject(entry)) throw new BackupFileError(`${where} is not an object`);
    refuseUnknownField(entry, fields, where);
    const { item, key, twice } = read(entry, where);
    if (seen.has(key)) throw new BackupFileError(`${where}${twice}`);
    seen.add(key);
    return item;
  });
}

/** An ISO 8601 instant as ms, or a refusal naming the field. */
function instantOf(value: unknown, field: string): number {
  const time = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(time)) throw new BackupFileError(`${field} is not an ISO 8601 instant`);
  return time;
}

function e164Of(value: unknown, field: string): string {
  if (typeof value !== 'string' || !E164.test(value)) throw new BackupFileError(`${field} is not a number in E.164`);
  return value;
}

function readTokens(value: unknown): StoredToken[] {
  return readSection(value, 'tokens', TOKEN_FIELDS, (entry, where) => {
    const token = readStoredToken(entry);
    if (token === undefined)
      throw new BackupFileError(
        `${where} is not a token record (id tok_ and 10 hex characters, label, createdAt, hash: 64 hex characters)`,
      );
    return { item: token, key: token.id, twice: ` (${token.id}) appears twice` };
  });
}

function readVotes(value: unknown): ReportVote[] {
  return readSection(value, 'reports', VOTE_FIELDS, (entry, where) => {
    const { tokenId, rating, comment } = entry;
    const e164 = e164Of(entry.e164, `${where}.e164`);
    if (typeof tokenId !== 'string' || !isTokenId(tokenId))
      throw new BackupFileError(`${where}.tokenId is not a token id`);
    if (typeof rating !== 'string' || !RATINGS.has(rating))
      throw new BackupFileError(`${where}.rating is not one of ${REPORT_RATINGS.join(', ')}`);
    const at = instantOf(entry.at, `${where}.at`);
    if (comment !== undefined && (typeof comment !== 'string' || [...comment].length > COMMENT_MAX_LENGTH))
      throw new BackupFileError(`${where}.comment is not a string of at most ${COMMENT_MAX_LENGTH} characters`);
    return {
      item: {
        e164,
        tokenId,
        rating: rating as ReportVote['rating'],
        at,
        ...(comment === undefined ? {} : { comment }),
      },
      key: `${e164} ${tokenId}`,
      twice: `: the token ${tokenId} has two votes on one number`,
    };
  });
}

function readDismissals(value: unknown): Dismissal[] {
  return readSection(value, 'dismissals', DISMISSAL_FIELDS, (entry, where) => {
    const e164 = e164Of(entry.e164, `${where}.e164`);
    return {
      item: { e164, at: instantOf(entry.at, `${where}.at`) },
      key: e164,
      twice: ': the number is dismissed twice',
    };
  });
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
  const sections = SECTIONS_OF_VERSION.get(value.version);
  if (sections === undefined) {
    throw new BackupFileError(
      `a ${BACKUP_FORMAT} file of version ${JSON.stringify(value.version)}; this phone-rep restores versions ${[...SECTIONS_OF_VERSION.keys()].join(', ').replace(/, (?=[^,]*$)/, ' and ')}`,
    );
  }
  const unknown = Object.keys(value).find((key) => !['format', 'version', 'createdAt', ...sections].includes(key));
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
  const tokens = sections.has('tokens') && value.tokens !== undefined ? readTokens(value.tokens) : undefined;
  const reports = sections.has('reports') && value.reports !== undefined ? readVotes(value.reports) : undefined;
  const dismissals =
    sections.has('dismissals') && value.dismissals !== undefined ? readDismissals(value.dismissals) : undefined;
  return {
    createdAt: value.createdAt,
    lists: { rules },
    ...(tokens === undefined ? {} : { tokens }),
    ...(reports === undefined ? {} : { reports }),
    ...(dismissals === undefined ? {} : { dismissals }),
  };
}
