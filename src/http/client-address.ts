// Who a client is: its canonical address (read once, the same for the rate limit, the
// RATE_LIMIT_EXEMPT check and the upstream fair shares) and the bucket its requests count
// against. The address itself comes from Fastify's `request.ip`, which honours TRUST_PROXY (the
// first untrusted X-Forwarded-For hop, or the socket address when no proxy is trusted).
import net, { type BlockList } from 'node:net';
import type { KeyedHasher } from '../domain/ports/key-hasher.js';
import type { LookupClient } from '../domain/ports/source.js';

/**
 * The client's canonical address, the one both the rate limit and RATE_LIMIT_EXEMPT read: the
 * address Fastify gives (`request.ip`, which honours TRUST_PROXY) with a forwarded `ip:port`
 * port dropped (`1.2.3.4:5678`, `[2001:db8::1]:443`, as some balancers write them), brackets
 * and zone removed, an IPv4-mapped IPv6 (::ffff:1.2.3.4) as the IPv4. Anything else that is
 * not an address counts as the socket's address (`fallback`), so an unparseable entry never
 * lands in a bucket shared with other clients; undefined when neither is an address.
 */
export function clientOf(address: string | undefined, fallback?: string): string | undefined {
  return canonicalAddress(address) ?? (fallback === undefined ? undefined : canonicalAddress(fallback));
}

/**
 * The rate limit's bucket of a client: its canonical address (clientOf) for IPv4, its /64 for
 * IPv6, since one subscriber usually holds a whole /64 and could otherwise rotate addresses
 * freely; `unknown` when there is no address at all.
 */
export function clientBucket(address: string | undefined, fallback?: string): string {
  return bucketOfCanonical(clientOf(address, fallback));
}

/**
 * What the keyed hash of a client is made of: its bucket. The rate limit's key and the
 * client's identity for the upstream fair shares are both this one hash, so a client is one
 * client everywhere and its address never leaves the process in clear.
 */
export function clientKeyInput(canonical: string | undefined): string {
  return `ratelimit:${bucketOfCanonical(canonical)}`;
}

/** The bucket of an address clientOf already made canonical. */
export function bucketOfCanonical(canonical: string | undefined): string {
  if (canonical === undefined) return 'unknown';
  if (net.isIPv4(canonical)) return canonical;
  return `${expandIPv6(canonical).slice(0, 4).join(':')}::/64`;
}

/**
 * Whether a client is in the exempt list. `canonical` is the client's canonical address
 * (clientOf: the port of a forwarded `ip:port` dropped, an IPv4-mapped address as the IPv4),
 * the same address the rate limit's bucket is made of. Node's BlockList applies IPv6 rules on
 * the IPv4-mapped space to IPv4 addresses; config.ts refuses a range that would so exempt
 * every IPv4 client (::/0).
 */
export function isExempt(list: BlockList, canonical: string | undefined): boolean {
  if (canonical === undefined) return false;
  if (net.isIPv4(canonical)) return list.check(canonical, 'ipv4');
  if (net.isIPv6(canonical)) return list.check(canonical, 'ipv6');
  return false;
}

/**
 * The client a lookup is made for, as the engine and the fetchers know it: the rate limit's
 * own key (the keyed hash of its bucket) and whether it is exempt (a larger share of each
 * upstream budget). Made only when a lookup goes to the engine, never on a cached answer.
 */
export function lookupClientOf(
  request: { ip: string | undefined; socket: { remoteAddress?: string | undefined } },
  hashKey: KeyedHasher,
  exempt: BlockList | undefined,
): LookupClient {
  const canonical = clientOf(request.ip, request.socket.remoteAddress);
  return { key: hashKey(clientKeyInput(canonical)), exempt: exempt !== undefined && isExempt(exempt, canonical) };
}

function canonicalAddress(address: string | undefined): string | undefined {
  if (!address) return undefined;
  const withPort = /^(\d+\.\d+\.\d+\.\d+):\d{1,5}$/.exec(address) ?? /^\[([^\]]+)\]:\d{1,5}$/.exec(address);
  const bare = (withPort?.[1] ?? address).replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped?.[1]) return net.isIPv4(mapped[1]) ? mapped[1] : undefined;
  if (net.isIPv4(bare) || net.isIPv6(bare)) return bare;
  return undefined;
}

function expandIPv6(address: string): string[] {
  let text = address.toLowerCase();
  // An embedded IPv4 tail (::1.2.3.4) becomes two hextets.
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, v4.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headParts = head === '' ? [] : head.split(':');
  const tailParts = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headParts.length - tailParts.length;
  const parts =
    tail === undefined ? headParts : [...headParts, ...Array<string>(Math.max(0, missing)).fill('0'), ...tailParts];
  return parts.map((part) => part.replace(/^0+(?=.)/, ''));
}
