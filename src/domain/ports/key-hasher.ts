// Keyed hashing of personal data (phone numbers, client addresses) that must be stored or
// compared: cache keys, rate-limit keys, log correlation ids. The domain needs only the shape;
// src/infra/hash.ts implements it with an HMAC.
export type KeyedHasher = (value: string) => string;
