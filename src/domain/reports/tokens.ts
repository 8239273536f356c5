// The rules of reporters' tokens (docs/reports.md, "Tokens"): what a secret and an id look
// like, how a secret is kept (its SHA-256 only), when a token is in force, how coarsely its use
// is noted, and which labels and expiries an operator may give. Pure: the randomness is given
// by the caller (src/infra/reports/token-store.ts), so the store and the tests decide it.
import { createHash } from 'node:crypto';
import { checkExpiry } from '../lists/rules.js';
import type { ReporterToken } from '../ports/caller-reports.js';

export const TOKEN_SECRET_PREFIX = 'prt_';
export const TOKEN_ID_PREFIX = 'tok_';
/** Random bytes of a secret (256 bits): guessing one is out of reach, so no lockout is needed for it. */
export const TOKEN_SECRET_BYTES = 32;
/** Random bytes of an id (10 hex characters): ids are public, only unique among a deployment's tokens. */
export const TOKEN_ID_BYTES = 5;
export const TOKEN_LABEL_MAX_LENGTH = 60;

const TOKEN_ID = /^tok_[0-9a-f]{10}$/;
const HASH = /^[0-9a-f]{64}$/;
/** Control characters (C0, DEL, C1) and the line and paragraph separators: a label is one line of a listing. */
const CONTROL = /[\p{Cc}\u2028\u2029]/u;
const HOUR_MS = 3_600_000;

/** A token as the stores keep it: the record and the SHA-256 hex of its secret, never the secret. */
export interface StoredToken extends ReporterToken {
  hash: string;
}

/** Where the randomness comes from: `size` random bytes (crypto.randomBytes in the store). */
export type RandomBytes = (size: number) => Uint8Array;

/** A new secret: `prt_` and 32 random bytes in base64url (43 characters). */
export function newTokenSecret(random: RandomBytes): string {
  return `${TOKEN_SECRET_PREFIX}${Buffer.from(random(TOKEN_SECRET_BYTES)).toString('base64url')}`;
}

/** A new id: `tok_` and 10 lowercase hex characters. */
export function newTokenId(random: RandomBytes): string {
  return `${TOKEN_ID_PREFIX}${Buffer.from(random(TOKEN_ID_BYTES)).toString('hex')}`;
}

export function isTokenId(value: string): boolean {
  return TOKEN_ID.test(value);
}

/** What is kept of a secret: its SHA-256, in lowercase hex. */
export function hashTokenSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Whether `token` is accepted at `now` (ms): not revoked, and not expired (refused from `expiresAt` on). */
export function inForce(token: ReporterToken, now: number): boolean {
  if (token.revokedAt !== undefined) return false;
  return token.expiresAt === undefined || Date.parse(token.expiresAt) > now;
}

/** `now` rounded down to the hour, in ISO 8601: lastUsedAt tells when a token was used to the hour, no finer. */
export function usedAtHour(now: number): string {
  return new Date(Math.floor(now / HOUR_MS) * HOUR_MS).toISOString();
}

/**
 * The lastUsedAt to write for a use at `now`, or undefined when the one kept already says this
 * hour (or a later one: another instance's clock ahead never moves it back). At most one write
 * an hour per token.
 */
export function lastUsedAtToWrite(token: ReporterToken, now: number): string | undefined {
  const hour = usedAtHour(now);
  if (token.lastUsedAt !== undefined && Date.parse(token.lastUsedAt) >= Date.parse(hour)) return undefined;
  return hour;
}

/** A field of a new token that was refused, and why (a 400's `field`, the CLI's message). */
export interface TokenProblem {
  field: 'label' | 'expiresAt';
  reason: string;
}

export type CheckedToken<T> = { ok: true; value: T } | { ok: false; problem: TokenProblem };

/** A label as given: trimmed; 1 to 60 characters; no control character. */
export function checkTokenLabel(label: unknown): CheckedToken<string> {
  if (typeof label !== 'string') return { ok: false, problem: { field: 'label', reason: 'a label is required' } };
  const trimmed = label.trim();
  const length = [...trimmed].length;
  if (length === 0) return { ok: false, problem: { field: 'label', reason: 'a label is required' } };
  if (length > TOKEN_LABEL_MAX_LENGTH)
    return {
      ok: false,
      problem: {
        field: 'label',
        reason: `a label is at most ${TOKEN_LABEL_MAX_LENGTH} characters (this one ${length})`,
      },
    };
  if (CONTROL.test(trimmed))
    return { ok: false, problem: { field: 'label', reason: 'a label may not hold control characters' } };
  return { ok: true, value: trimmed };
}

/** An expiry as given: absent, or an ISO 8601 date or instant after `now` (a date alone is its midnight UTC). */
export function checkTokenExpiry(expiresAt: unknown, now: number): CheckedToken<string | undefined> {
  if (expiresAt === undefined) return { ok: true, value: undefined };
  if (typeof expiresAt !== 'string' || expiresAt === '')
    return { ok: false, problem: { field: 'expiresAt', reason: 'an expiry is an ISO 8601 date or time' } };
  const checked = checkExpiry(expiresAt, now);
  if (!checked.ok) return { ok: false, problem: { field: 'expiresAt', reason: checked.problem.reason } };
  return { ok: true, value: checked.value };
}

/** What an operator gives for a new token, checked and normalised. */
export function checkNewToken(
  input: { label: unknown; expiresAt?: unknown },
  now: number,
): CheckedToken<{ label: string; expiresAt?: string }> {
  const label = checkTokenLabel(input.label);
  if (!label.ok) return label;
  const expiresAt = checkTokenExpiry(input.expiresAt, now);
  if (!expiresAt.ok) return expiresAt;
  return {
    ok: true,
    value: { label: label.value, ...(expiresAt.value === undefined ? {} : { expiresAt: expiresAt.value }) },
  };
}

/** A new token for a checked input: its secret (shown once) and what is stored. */
export function makeToken(
  input: { label: string; expiresAt?: string },
  now: number,
  random: RandomBytes,
): { secret: string; token: StoredToken } {
  const secret = newTokenSecret(random);
  return {
    secret,
    token: {
      id: newTokenId(random),
      label: input.label,
      createdAt: new Date(now).toISOString(),
      ...(input.expiresAt === undefined ? {} : { expiresAt: input.expiresAt }),
      hash: hashTokenSecret(secret),
    },
  };
}

/** The record as it is listed: everything but the hash. */
export function publicToken(token: StoredToken): ReporterToken {
  const { hash: _hash, ...record } = token;
  return record;
}

const isInstant = (value: unknown): value is string => typeof value === 'string' && Number.isFinite(Date.parse(value));

/** A stored token read back (the file, a Redis hash field), or undefined when it is not one. */
export function readStoredToken(value: unknown): StoredToken | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const { id, label, createdAt, expiresAt, lastUsedAt, revokedAt, hash } = record;
  if (typeof id !== 'string' || !isTokenId(id)) return undefined;
  if (typeof label !== 'string' || typeof hash !== 'string' || !HASH.test(hash) || !isInstant(createdAt))
    return undefined;
  for (const optional of [expiresAt, lastUsedAt, revokedAt])
    if (optional !== undefined && !isInstant(optional)) return undefined;
  return {
    id,
    label,
    createdAt,
    ...(expiresAt === undefined ? {} : { expiresAt: expiresAt as string }),
    ...(lastUsedAt === undefined ? {} : { lastUsedAt: lastUsedAt as string }),
    ...(revokedAt === undefined ? {} : { revokedAt: revokedAt as string }),
    hash,
  };
}
