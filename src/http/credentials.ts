// The one place credentials are read and compared: the admin API's bearer token (ADMIN_TOKEN)
// and the blocklist feed's HTTP Basic user and password (FEED_USER, FEED_PASSWORD). Every
// comparison is constant-time: both sides are hashed first (so their lengths do not show
// either) and the digests compared with timingSafeEqual. What a route does with a failure (the
// 401, the limit on failed credentials) stays with the route.
import { createHash, timingSafeEqual } from 'node:crypto';

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** A check of a given secret against the expected one, whose digest is made once. */
export function secretCheck(expected: string): (given: string) => boolean {
  const expectedDigest = digest(expected);
  return (given) => timingSafeEqual(digest(given), expectedDigest);
}

/** The token of `Authorization: Bearer <token>`, or undefined when the header is absent or of another shape. */
export function bearerTokenOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return /^Bearer +([^\s]+)\s*$/i.exec(header)?.[1];
}

/** `Authorization: Basic <base64>` as sent (`encoded`) and decoded (`user:password`), or undefined. */
export function basicCredentialsOf(header: string | undefined): { encoded: string; decoded: string } | undefined {
  const encoded = /^Basic[ ]+([A-Za-z0-9+/=]{1,1024})\s*$/i.exec(header ?? '')?.[1];
  if (encoded === undefined) return undefined;
  return { encoded, decoded: Buffer.from(encoded, 'base64').toString('utf8') };
}

/** A check of an Authorization header against HTTP Basic credentials, in constant time. */
export function basicCheck(user: string, password: string): (header: string | undefined) => boolean {
  const matches = secretCheck(`${user}:${password}`);
  return (header) => {
    const given = basicCredentialsOf(header);
    return given !== undefined && matches(given.decoded);
  };
}
