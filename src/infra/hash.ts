// Keyed hashing for anything derived from personal data (phone numbers, client addresses)
// that must be stored or compared: cache keys, rate-limit keys, log correlation ids.
import { createHmac, randomBytes } from 'node:crypto';
import type { KeyedHasher } from '../domain/ports/key-hasher.js';

export type { KeyedHasher };

/** HMAC-SHA-256, base64url, truncated to 22 characters (132 bits): short keys, no practical collisions. */
export function createKeyedHasher(secret: string | Buffer = randomBytes(32)): KeyedHasher {
  return (value) => createHmac('sha256', secret).update(value).digest('base64url').slice(0, 22);
}
